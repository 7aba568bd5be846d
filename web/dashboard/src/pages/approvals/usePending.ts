import { useQuery } from '@tanstack/react-query';
import { errorText } from '../../format';
import { type Approval, pendingApprovalsQuery } from '../../services/approvals';

/** usePending keeps the pending approvals fresh (the inbox, its count, the overview). */
export function usePending(): { pending: Approval[] | null; error: string } {
  const { data, error } = useQuery(pendingApprovalsQuery());
  return { pending: data ?? null, error: error ? errorText(error) : '' };
}
