// The account's settings: the smallest deposit announced, per currency.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call } from './api';

export type AccountSettingsFromAPI = Schemas['AccountSettings'];

/** DepositMinimums are the smallest deposits announced (tx.received); smaller ones are listed, marked below minimum. */
export interface DepositMinimums {
  usdc: number;
  eur: number;
  sol: number;
}

export const toDepositMinimums = (s: AccountSettingsFromAPI): DepositMinimums => ({
  usdc: s.deposit_min_usdc,
  eur: s.deposit_min_eur,
  sol: s.deposit_min_sol,
});

export const accountSettingsKeys = {
  all: ['account-settings'] as const,
};

/** accountSettingsQuery reads the account's settings. */
export const accountSettingsQuery = () =>
  queryOptions({
    queryKey: accountSettingsKeys.all,
    queryFn: ({ signal }) => call<AccountSettingsFromAPI>('GET', `${API}/account/settings`, undefined, signal).then(toDepositMinimums),
  });

/** setDepositMinimums changes the minimums given (owners). */
export const setDepositMinimums = (body: Schemas['PatchAccountSettingsInputBody']) =>
  call<AccountSettingsFromAPI>('PATCH', `${API}/account/settings`, body).then(toDepositMinimums);
