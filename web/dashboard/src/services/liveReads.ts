// The one place where live updates make cached reads stale: each kind of
// event the stream carries (live.ts), and the reads it changes.
import type { Query, QueryKey } from '@tanstack/react-query';
import type { LiveEventKind } from '../live';
import { analyticsKeys } from './analytics';
import { approvalKeys } from './approvals';
import { feePayerKeys } from './feePayer';
import { queryClient } from './queryClient';
import { transactionKeys } from './transactions';
import { userKeys } from './users';
import { walletKeys } from './wallets';
import { webhookKeys } from './webhooks';

/**
 * Reads names a set of cached reads: a family (a key prefix), optionally
 * narrowed by a predicate.
 */
type Reads = { queryKey: QueryKey; predicate?: (q: Query) => boolean };

/** APPROVALS are the inbox (pending and decided) and each approval's page. */
const APPROVALS: Reads[] = [{ queryKey: approvalKeys.all }, { queryKey: approvalKeys.details }];
/** DECIDED are the reads that show a decided approval's payment (its transaction status). */
const DECIDED: Reads[] = [{ queryKey: approvalKeys.decided() }, { queryKey: approvalKeys.details }];
/** WALLET is a wallet's page (its balance, activity, ledger and differences), not its history (policy changes, freezes). */
const WALLET: Reads = { queryKey: walletKeys.details, predicate: (q) => q.queryKey[2] !== 'history' };
/** ANALYTICS is every range of analytics: the overview's spend today, the analytics page. */
const ANALYTICS: Reads = { queryKey: analyticsKeys.all };
/** MONEY is what a payment moves: the transaction lists (the overview's newest), the chain balances, the fee payer. */
const MONEY: Reads[] = [{ queryKey: transactionKeys.all }, { queryKey: walletKeys.balances }, { queryKey: feePayerKeys.all }, WALLET, ANALYTICS];

/**
 * EVENT_READS maps each kind the event stream carries to the reads it
 * makes stale. The events carry the webhook's data, not the reads' shapes,
 * so the reads are fetched again (those on screen at once), never written
 * from the event.
 */
export const EVENT_READS: Record<LiveEventKind, readonly Reads[]> = {
  // Parked: the inbox and its count, the wallet's approvals. Nothing is spent yet.
  'approval.pending': [...APPROVALS, WALLET],
  // A vote short of the quorum: the approval's count and voters, still pending.
  'approval.vote': [...APPROVALS],
  // Approved, signed and broadcast: a payment on its way, and a decision the analytics count.
  'approval.approved': [...APPROVALS, ...MONEY],
  // Closed without spending: the inbox, the wallet's approvals, the decisions counted.
  'approval.rejected': [...APPROVALS, WALLET, ANALYTICS],
  'approval.expired': [...APPROVALS, WALLET, ANALYTICS],
  // Confirmed or failed on chain: the money reads, and the approval it may have come from.
  'tx.sent': [...MONEY, ...DECIDED],
  'tx.failed': [...MONEY, ...DECIDED],
  // Money that came in: the balances and the wallets' transactions.
  'tx.received': [...MONEY],
  // A deposit a fork dropped: the wallets' transactions (it shows failed), their balances and ledgers.
  'tx.receive_failed': [...MONEY],
  // Money that left a wallet in a transaction the service did not make (a wallet's differences).
  'wallet.unexplained_outflow': [...MONEY],
  // The daily snapshot found the chain's balance not the ledger's: the wallet's differences.
  'wallet.balance_mismatch': [WALLET],
  // Refused by the policy: no transaction, only the analytics' blocked sends.
  'tx.blocked': [ANALYTICS],
  // An x402 payment or MPP charge that moved nothing: its reservation is released.
  'x402.expired': [...MONEY, ...DECIDED],
  'mpp.expired': [...MONEY, ...DECIDED],
  // A person made a user of the account (a new owner among them): the people, wherever shown.
  'user.added': [{ queryKey: userKeys.all }],
  // A delivery that gave up: the endpoints' health and their delivery logs.
  'delivery.failed': [
    { queryKey: webhookKeys.endpoints },
    { queryKey: webhookKeys.endpointDetails },
    { queryKey: webhookKeys.deliveries },
    { queryKey: webhookKeys.details },
  ],
};

/**
 * liveEvent is where the event stream reports an event (its kind, such as
 * approval.pending or tx.sent): the reads it changes refetch if shown. An
 * unknown kind changes nothing.
 */
export function liveEvent(kind: string) {
  const reads = EVENT_READS[kind as LiveEventKind] ?? [];
  return Promise.all(reads.map((r) => queryClient.invalidateQueries(r)));
}

/** liveReset is the stream saying it could not replay what was missed: every read is fetched again. */
export function liveReset() {
  return queryClient.invalidateQueries();
}
