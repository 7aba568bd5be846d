import { createFileRoute } from '@tanstack/react-router';
import { Inbox } from '../../pages/approvals/Inbox';
import { decidedApprovalsQuery, pendingApprovalsQuery } from '../../services/approvals';
import { warm } from '../../services/queryClient';
import { inboxSearch } from './index.schema';

/** The inbox: the approvals waiting for a decision, and those decided (?tab=decided). */
export const Route = createFileRoute('/approvals/')({
  codeSplitGroupings: [],
  validateSearch: inboxSearch,
  loaderDeps: ({ search }) => ({ tab: search.tab }),
  beforeLoad: ({ search }) => ({
    inbox: { pending: pendingApprovalsQuery(), decided: search.tab === 'decided' ? decidedApprovalsQuery() : null },
  }),
  loader: ({ context: { queryClient, inbox } }) =>
    warm(queryClient.ensureQueryData(inbox.pending), ...(inbox.decided ? [queryClient.ensureQueryData(inbox.decided)] : [])),
  component: Inbox,
});
