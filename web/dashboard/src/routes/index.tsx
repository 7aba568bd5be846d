import { createFileRoute } from '@tanstack/react-router';
import { Home } from '../pages/overview/Home';
import { pendingApprovalsQuery } from '../services/approvals';
import { failedTodayQuery, newestWalletsQuery, overviewFeePayerQuery, recentTransactionsQuery, spendTodayQuery, utcDay } from '../services/overview';
import { warm } from '../services/queryClient';

/** The overview: the account at a glance, the first page most people see. */
export const Route = createFileRoute('/')({
  // In the first chunk, with the inbox and an approval: the pages opened first.
  codeSplitGroupings: [],
  beforeLoad: () => {
    const today = utcDay();
    return {
      overview: {
        pending: pendingApprovalsQuery(),
        wallets: newestWalletsQuery(),
        spend: spendTodayQuery(today),
        recent: recentTransactionsQuery(),
        failed: failedTodayQuery(today),
        feePayer: overviewFeePayerQuery(),
      },
    };
  },
  // Each wallet's balance is read once the wallets are known.
  loader: ({ context: { queryClient, overview: q } }) =>
    warm(
      queryClient.ensureQueryData(q.pending),
      queryClient.ensureQueryData(q.wallets),
      queryClient.ensureQueryData(q.spend),
      queryClient.ensureQueryData(q.recent),
      queryClient.ensureQueryData(q.failed),
      queryClient.ensureQueryData(q.feePayer),
    ),
  component: Home,
});
