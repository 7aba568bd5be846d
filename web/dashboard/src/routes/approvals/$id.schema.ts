import { APPROVAL_ID } from '../../search';

/** approvalParams keeps an approval's id only in the API's form (ap_…): another shows the overview. */
export const approvalParams = {
  parse: ({ id }: { id: string }) => ({ id: APPROVAL_ID.test(id) ? id : null }),
  stringify: ({ id }: { id: string | null }) => ({ id: id ?? '' }),
};
