import { UUID } from '../../search';

/** walletParams keeps a wallet's id only in the API's form (a UUID): another shows the overview. */
export const walletParams = {
  parse: ({ id }: { id: string }) => ({ id: UUID.test(id) ? id : null }),
  stringify: ({ id }: { id: string | null }) => ({ id: id ?? '' }),
};
