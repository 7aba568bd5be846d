import { UUID } from '../../../search';

/** exportParams keeps a request's ids only in the API's form (UUIDs): another shows the overview. */
export const exportParams = {
  parse: ({ walletId, exportId }: { walletId: string; exportId: string }) => ({
    walletId: UUID.test(walletId) ? walletId : null,
    exportId: UUID.test(exportId) ? exportId : null,
  }),
  stringify: ({ walletId, exportId }: { walletId: string | null; exportId: string | null }) => ({
    walletId: walletId ?? '',
    exportId: exportId ?? '',
  }),
};
