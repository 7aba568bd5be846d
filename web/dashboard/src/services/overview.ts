// The overview's reads: the newest wallets with their policies, each
// wallet's live balance (a chain read per wallet), today's spend, the
// newest transactions, what failed today and the fee payer. Each is
// another service's read, paced for a page left open.
import { queryOptions } from '@tanstack/react-query';
import { daySpendQuery } from './analytics';
import { feePayerQuery } from './feePayer';
import { poll } from './queryClient';
import { listTransactions, transactionKeys } from './transactions';
import { getBalance, listWallets, walletKeys } from './wallets';

/** REFRESH_MS paces the page: slower than the 2 s lists, as balances are chain reads. */
export const REFRESH_MS = 12_000;
/** BALANCE_CONCURRENCY caps the balance reads in flight (each one is an RPC call). */
const BALANCE_CONCURRENCY = 4;
/**
 * BALANCE_READS_PER_MINUTE keeps a large account under the API's 120 reads
 * a minute per user (the approvals count already polls every 2 s): with
 * many wallets the balances refresh less often than the rest.
 */
const BALANCE_READS_PER_MINUTE = 50;
export const WALLETS_SHOWN = 50;
const TRANSACTIONS_SHOWN = 10;
const FAILED_SHOWN = 5;

/**
 * limited is fn with at most n calls in flight: the others wait their turn
 * (a freed slot passes straight to the next in line).
 */
export function limited<T, R>(n: number, fn: (arg: T) => Promise<R>): (arg: T) => Promise<R> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (arg) => {
    if (running < n) running++;
    else await new Promise<void>((go) => waiting.push(go));
    try {
      return await fn(arg);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** today is the UTC day (YYYY-MM-DD). */
export const utcDay = (now = new Date()) => now.toISOString().slice(0, 10);

/** newestWalletsQuery is the newest wallets, and whether there are more, polled whatever the stream says (balances come with them). */
export const newestWalletsQuery = () =>
  queryOptions({
    queryKey: walletKeys.newest(),
    queryFn: async ({ signal }) => {
      const p = await listWallets('', undefined, WALLETS_SHOWN, signal);
      return { wallets: p.items, more: !!p.nextCursor };
    },
    ...poll(REFRESH_MS, false),
  });

/** spendTodayQuery is today's spend per wallet (and the day's blocked sends). */
export const spendTodayQuery = (today: string) => daySpendQuery(today, REFRESH_MS);

/** recentTransactionsQuery is the newest transactions. */
export const recentTransactionsQuery = () =>
  queryOptions({
    queryKey: transactionKeys.recent(),
    queryFn: async ({ signal }) => (await listTransactions({}, undefined, TRANSACTIONS_SHOWN, signal)).items,
    ...poll(REFRESH_MS),
  });

/** failedTodayQuery is what failed today: the newest failed transactions of the UTC day, and whether there are more. */
export const failedTodayQuery = (today: string) => {
  const filter = { status: 'failed', since: `${today}T00:00:00Z` };
  return queryOptions({
    queryKey: transactionKeys.list(filter),
    queryFn: async ({ signal }) => {
      const p = await listTransactions(filter, undefined, FAILED_SHOWN, signal);
      return { transactions: p.items, more: !!p.nextCursor };
    },
    ...poll(REFRESH_MS),
  });
};

/** The fee payer's SOL is a chain read: polled whatever the event stream says. */
export const overviewFeePayerQuery = () => feePayerQuery(REFRESH_MS);

/** readBalance reads one wallet's balance, BALANCE_CONCURRENCY at most at a time. */
const readBalance = limited(BALANCE_CONCURRENCY, ({ id, signal }: { id: string; signal: AbortSignal }) => getBalance(id, signal));

/** balancePace is how often each of n wallets' balance is read: all of them within a minute stay under BALANCE_READS_PER_MINUTE. */
export const balancePace = (n: number) => Math.max(REFRESH_MS, (n * 60_000) / BALANCE_READS_PER_MINUTE);

/** balanceQuery reads a wallet's balance from the chain every pace ms. */
export const balanceQuery = (id: string, pace: number) =>
  queryOptions({
    queryKey: walletKeys.balance(id),
    queryFn: ({ signal }) => readBalance({ id, signal }),
    ...poll(pace, false),
    staleTime: pace,
  });
