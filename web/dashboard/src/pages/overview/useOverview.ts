import { type UseQueryResult, useQueries, useQuery } from '@tanstack/react-query';
import { errorText } from '../../format';
import { queryClient, invalidate } from '../../services/queryClient';
import {
  balancePace,
  balanceQuery,
  failedTodayQuery,
  newestWalletsQuery,
  overviewFeePayerQuery,
  recentTransactionsQuery,
  spendTodayQuery,
  utcDay,
} from '../../services/overview';
import { walletKeys, type Balance } from '../../services/wallets';

/** Loaded is a read as the page shows it: the last data, and the latest read's failure. */
export type Loaded<T> = { data: T | null; error: string };
/** BalanceRead is a wallet's last good balance and the latest read's failure, if it failed. */
export type BalanceRead = { balance: Balance | null; error: string };

const loaded = <T>(r: UseQueryResult<T>): Loaded<T> => ({ data: r.data ?? null, error: r.error ? errorText(r.error) : '' });

/**
 * useOverview keeps the wallets, today's spend, the newest transactions and
 * the fee payer fresh every REFRESH_MS (not while the tab is hidden), and
 * each wallet's balance at a pace that keeps many wallets under the rate
 * limit; refresh() reads the lists now, and the balances whose last read failed.
 */
export function useOverview() {
  const today = utcDay();
  const reads = {
    wallets: newestWalletsQuery(),
    spend: spendTodayQuery(today),
    txs: recentTransactionsQuery(),
    failed: failedTodayQuery(today),
    feePayer: overviewFeePayerQuery(),
  };
  const wallets = useQuery(reads.wallets);
  const spend = useQuery(reads.spend);
  const txs = useQuery(reads.txs);
  const failed = useQuery(reads.failed);
  const feePayer = useQuery(reads.feePayer);

  // Chain reads, one a wallet, paced to stay under the rate limit.
  const ids = wallets.data?.wallets.map((a) => a.id) ?? [];
  const pace = balancePace(ids.length);
  const balanceReads = useQueries({ queries: ids.map((id) => balanceQuery(id, pace)) });
  const balances = new Map<string, BalanceRead>();
  balanceReads.forEach((r, i) => {
    if (r.status !== 'pending') balances.set(ids[i], { balance: r.data ?? null, error: r.error ? errorText(r.error) : '' });
  });

  const lists = [wallets, spend, txs, feePayer, failed];
  const at = Math.max(...lists.map((r) => Math.max(r.dataUpdatedAt, r.errorUpdatedAt)));
  const busy = lists.some((r) => r.isFetching) || balanceReads.some((r) => r.isFetching);
  // A click mid-round starts the lists over; balances keep their pace, but those that failed are read again.
  const refresh = () => {
    void invalidate(...Object.values(reads).map((r) => r.queryKey));
    void queryClient.refetchQueries({ queryKey: walletKeys.balances, type: 'active', predicate: (q) => q.state.status === 'error' });
  };

  return {
    wallets: loaded(wallets),
    spend: loaded(spend),
    txs: loaded(txs),
    feePayer: loaded(feePayer),
    failed: loaded(failed),
    balances,
    updated: at > 0 ? new Date(at) : null,
    busy,
    refresh,
  };
}
