import type { DayFilter, TransactionStatus } from '../services/transactions';
import { day, oneOf, text } from '../search';

/** TransactionsSearch is the transactions page's filter: a wallet, a status, UTC days (YYYY-MM-DD). */
export type TransactionsSearch = { wallet_id?: string; status?: TransactionStatus; since?: string; until?: string };

export const transactionsSearch = (s: Record<string, unknown>): TransactionsSearch => ({
  wallet_id: text(s.wallet_id),
  status: oneOf(s.status, ['pending', 'confirmed', 'failed'] as const),
  since: day(s.since),
  until: day(s.until),
});

/** filterOf is the search as the page's filter: '' for what is not set. */
export const filterOf = (s: TransactionsSearch): DayFilter => ({
  wallet_id: s.wallet_id ?? '',
  status: s.status ?? '',
  since: s.since ?? '',
  until: s.until ?? '',
});
