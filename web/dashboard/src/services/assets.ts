// Assets: the tokens of the account's network a wallet may hold and spend
// (USDC first), each with the currency its policy limits count it in.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call } from './api';

export type Asset = Schemas['AssetOut'];

export const assetKeys = { all: ['assets'] as const };

/** assetsQuery reads the network's assets once: they change only when the service is configured again. */
export const assetsQuery = () =>
  queryOptions({
    queryKey: assetKeys.all,
    queryFn: async ({ signal }): Promise<Asset[]> =>
      (await call<Schemas['AssetsOutputBody']>('GET', `${API}/assets`, undefined, signal)).assets ?? [],
    staleTime: Infinity,
  });
