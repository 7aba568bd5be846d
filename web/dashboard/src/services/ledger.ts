// A wallet's ledger: its balance of each asset over time (every change read from
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

/** ALL asks the history of every asset of the wallet's network, and SOL: a series each. */
export const ALL = 'all';

/** BalancePoint is the wallet's balance of a series' asset at an instant, from its ledger, in whole units. */
export type BalancePoint = { at: Date; amount: number };

/** BalanceSeries is one asset's balance over a range: a symbol of GET /assets or SOL, its decimals, its points oldest first. */
export type BalanceSeries = { asset: string; decimals: number; points: BalancePoint[] };

/** BalanceHistory is a range's series (one per asset asked; every series has the same instants) and their step. */
export type BalanceHistory = { interval: 'day' | 'hour'; series: BalanceSeries[] };

export const toBalanceHistory = (r: Schemas['HistoryOutputBody'], interval: BalanceHistory['interval']): BalanceHistory => ({
  interval,
  series: r.series.map((s) => ({ asset: s.asset, decimals: s.decimals, points: s.points.map((p) => ({ at: date(p.at), amount: p.amount })) })),
});

/** instants are a history's instants, oldest first: those of its first series (every series has the same). */
export const instants = (h: BalanceHistory): Date[] => h.series[0]?.points.map((p) => p.at) ?? [];

/** untouched says a history has nothing: every point of every series is zero (the ledger knows no change of the wallet yet, or it held nothing). */
export const untouched = (h: BalanceHistory): boolean => h.series.every((s) => s.points.every((p) => p.amount === 0));

const walletPath = (id: string) => `${API}/wallets/${encodeURIComponent(id)}`;

/**
 * getBalanceHistory reads a range of the wallet's balance of an asset (a
 * symbol, SOL, or ALL for a series each): 30 days by day (the API's default
 * span), or 48 hours by hour. Both end now, as the server's clock has it:
 * the last point is the balance with the newest change the ledger knows.
 */
export function getBalanceHistory(id: string, range: Range, asset: string, signal?: AbortSignal): Promise<BalanceHistory> {
  const interval = range === 'hours' ? 'hour' : 'day';
  const q = new URLSearchParams({ asset, interval });
  if (range === 'hours') q.set('from', new Date(Date.now() - 48 * 3600_000).toISOString());
  return call<Schemas['HistoryOutputBody']>('GET', `${walletPath(id)}/balance/history?${q}`, undefined, signal).then((r) =>
    toBalanceHistory(r, interval),
  );
}

/** balanceHistoryQuery is a wallet's balance of an asset over a range; another range's or asset's stays shown until its own arrives. */
export const balanceHistoryQuery = (id: string, range: Range, asset: string) =>
  queryOptions({
    queryKey: walletKeys.ledger(id, range, asset),
    queryFn: ({ signal }) => getBalanceHistory(id, range, asset, signal),
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
