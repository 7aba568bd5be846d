// A wallet's ledger: its USDC and SOL over time (every change read from
// the transactions that made it), and the differences the service found
// between the chain and the ledger (money that left in a transaction the
// service did not make, a daily snapshot where the chain's balance is not
// the ledger's). Both are read under the wallet's key, so the events that
// change a wallet's money read them again.
import { infiniteQueryOptions, keepPreviousData, queryOptions } from '@tanstack/react-query';
import { API, type Page, type Schemas, call, date } from './api';
import { cursorPages } from './queryClient';
import { walletKeys } from './wallets';

/** Range is the span of a wallet's balance over time: the last 30 days by day, or the last 48 hours by hour. */
export type Range = 'days' | 'hours';

/** BalancePoint is the wallet's balance at an instant, from its ledger. */
export type BalancePoint = { at: Date; usdc: number; sol: number };

/** BalanceHistory is a range's points, oldest first, and their step. */
export type BalanceHistory = { interval: 'day' | 'hour'; points: BalancePoint[] };

export const toBalanceHistory = (r: Schemas['HistoryOutputBody'], interval: BalanceHistory['interval']): BalanceHistory => ({
  interval,
  points: r.points.map((p) => ({ at: date(p.at), usdc: p.usdc, sol: p.sol })),
});

/** untouched says a history has nothing: every point is zero (the ledger knows no change of the wallet yet, or it held nothing). */
export const untouched = (h: BalanceHistory): boolean => h.points.every((p) => p.usdc === 0 && p.sol === 0);

const walletPath = (id: string) => `${API}/wallets/${encodeURIComponent(id)}`;

/**
 * getBalanceHistory reads a range of the wallet's balance: 30 days by day
 * (the API's default span), or 48 hours by hour. Both end now, as the
 * server's clock has it: the last point is the balance with the newest
 * change the ledger knows.
 */
export function getBalanceHistory(id: string, range: Range, signal?: AbortSignal): Promise<BalanceHistory> {
  const interval = range === 'hours' ? 'hour' : 'day';
  const q = new URLSearchParams({ interval });
  if (range === 'hours') q.set('from', new Date(Date.now() - 48 * 3600_000).toISOString());
  return call<Schemas['HistoryOutputBody']>('GET', `${walletPath(id)}/balance/history?${q}`, undefined, signal).then((r) =>
    toBalanceHistory(r, interval),
  );
}

/** balanceHistoryQuery is a wallet's balance over a range; another range's stays shown until its own arrives. */
export const balanceHistoryQuery = (id: string, range: Range) =>
  queryOptions({
    queryKey: walletKeys.ledger(id, range),
    queryFn: ({ signal }) => getBalanceHistory(id, range, signal),
    placeholderData: keepPreviousData,
  });

/** BalanceDifferenceFromAPI is a difference as GET /wallets/{id}/balance/differences sends it. */
export type BalanceDifferenceFromAPI = Schemas['BalanceDifference'];

/** BalanceDifference is a change of the wallet's balance the service did not make, or a snapshot that did not agree. */
export interface BalanceDifference {
  id: string;
  kind: BalanceDifferenceFromAPI['kind'];
  asset: BalanceDifferenceFromAPI['asset'];
  /** Signed, in the asset: negative, the chain holds less than the ledger knew (money left). */
  amount: number;
  at: Date;
  slot: number;
  /** unexplained_outflow: the transaction the service did not make, and who got the money. */
  signature: string | null;
  to: string | null;
  /** snapshot: the balance read on chain, and the ledger's at the same slot. */
  chain: number | null;
  ledger: number | null;
}

export const toBalanceDifference = (d: BalanceDifferenceFromAPI): BalanceDifference => ({
  id: d.id,
  kind: d.kind,
  asset: d.asset,
  amount: d.amount,
  at: date(d.at),
  slot: d.slot,
  signature: d.signature ?? null,
  to: d.to ?? null,
  chain: d.chain ?? null,
  ledger: d.ledger ?? null,
});

/** listBalanceDifferences is a page of the wallet's differences, newest first. */
export async function listBalanceDifferences(id: string, cursor?: string, limit = 50, signal?: AbortSignal): Promise<Page<BalanceDifference>> {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set('cursor', cursor);
  const r = await call<Schemas['DifferencesOutputBody']>('GET', `${walletPath(id)}/balance/differences?${q}`, undefined, signal);
  return { items: r.items.map(toBalanceDifference), nextCursor: r.next_cursor };
}

/** balanceDifferencesQuery pages a wallet's differences ("More differences" appends the next page). */
export const balanceDifferencesQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: walletKeys.differences(id),
    queryFn: ({ pageParam, signal }) => listBalanceDifferences(id, pageParam, 50, signal),
    ...cursorPages,
  });
