// Transactions: the payments the account's wallets sent and the deposits
// they received, newest first.
import { infiniteQueryOptions } from '@tanstack/react-query';
import { API, type Page, type Schemas, call, date } from './api';
import { money } from '../format';
import { cursorPages } from './queryClient';

export type TransactionFromAPI = Schemas['Transaction'];
export type TransactionStatus = TransactionFromAPI['status'];

/** Transaction is a payment as the pages read it. */
export interface Transaction {
  id: string;
  walletId: string;
  kind: TransactionFromAPI['kind'];
  /** What moved: a symbol of GET /assets (USDC, PYUSD, EURC, …), or SOL. */
  asset: string;
  /** send: out of the wallet; receive: a deposit into it (counterparty is then the sender). */
  direction: TransactionFromAPI['direction'];
  /** In whole units of asset. */
  amount: number;
  counterparty: string;
  memo: string | null;
  status: TransactionStatus;
  signature: string;
  /** Signatures of earlier attempts (signed again after expiry). */
  previousSignatures: string[];
  attempts: number;
  feeLamports: number | null;
  feePayer: string | null;
  approvalId: string | null;
  /** The paid resource's URL, for an x402 payment or an MPP charge. */
  resource: string | null;
  /** A deposit below the account's minimum: recorded, not announced (no tx.received). */
  belowMinimum: boolean;
  createdAt: Date;
}

export const toTransaction = (t: TransactionFromAPI): Transaction => ({
  id: t.id,
  walletId: t.wallet_id,
  kind: t.kind,
  asset: t.asset,
  direction: t.direction,
  amount: t.amount,
  counterparty: t.counterparty,
  memo: t.memo,
  status: t.status,
  signature: t.signature,
  previousSignatures: t.previous_signatures,
  attempts: t.attempts,
  feeLamports: t.fee_lamports,
  feePayer: t.fee_payer,
  approvalId: t.approval_id,
  resource: t.resource ?? null,
  belowMinimum: t.below_minimum ?? false,
  createdAt: date(t.created_at),
});

/** TransactionFilter is what the API filters transactions by: a wallet, a status, an asset, a span of times (RFC 3339). */
export type TransactionFilter = { wallet_id?: string; status?: string; asset?: string; since?: string; until?: string };

/**
 * transactionKeys name the transactions' reads; transactionKeys.all is
 * their family (a payment changes every list).
 */
export const transactionKeys = {
  all: ['transactions'] as const,
  list: (filter: TransactionFilter) => ['transactions', 'list', filter] as const,
  recent: () => ['transactions', 'recent'] as const,
};

/** listTransactions is a page of the transactions the filter keeps, newest first. */
export async function listTransactions(
  filter: TransactionFilter,
  cursor: string | undefined,
  limit = 50,
  signal?: AbortSignal,
): Promise<Page<Transaction>> {
  const q = new URLSearchParams({ limit: String(limit) });
  for (const [k, v] of Object.entries(filter)) if (v) q.set(k, v);
  if (cursor) q.set('cursor', cursor);
  const r = await call<{ transactions: TransactionFromAPI[]; next_cursor: string | null }>('GET', `${API}/transactions?${q}`, undefined, signal);
  return { items: r.transactions.map(toTransaction), nextCursor: r.next_cursor };
}

/** DayFilter is the transactions page's filter: a wallet, a status, and UTC days (YYYY-MM-DD). */
export type DayFilter = { wallet_id: string; status: string; since: string; until: string };

/** dayFilter is the API's filter of the page's: since is the day's start, until the next day's start. */
export const dayFilter = (f: DayFilter): TransactionFilter => ({
  wallet_id: f.wallet_id,
  status: f.status,
  since: f.since ? `${f.since}T00:00:00Z` : '',
  until: f.until ? new Date(Date.parse(`${f.until}T00:00:00Z`) + 86400000).toISOString() : '',
});

/** transactionsQuery pages the transactions the page's filter keeps ("Load more" appends the next page). */
export const transactionsQuery = (f: DayFilter) => {
  const filter = dayFilter(f);
  return infiniteQueryOptions({
    queryKey: transactionKeys.list(filter),
    queryFn: ({ pageParam, signal }) => listTransactions(filter, pageParam, 50, signal),
    ...cursorPages,
  });
};

/**
 * moved is what a transaction moved, in its asset: "+1.50 USDC" for a
 * deposit, "1.50 PYUSD" for a payment, "0.25 SOL" for SOL. A failed
 * deposit (a fork dropped it) brought nothing: no sign.
 */
export const moved = (t: Transaction): string => (t.direction === 'receive' && t.status !== 'failed' ? '+' : '') + money(t.amount, t.asset);
