// The dashboard's server state: one query cache (TanStack Query), the keys
// of what it holds, how often each read is refreshed, and the one place
// where live updates make cached reads stale.
//
// Polling policy: a page's reads refresh every few seconds while the page
// shows them and the tab is visible (never in a hidden tab), and at once
// when the tab shows again. An action invalidates the keys it changes.
// Reads the event stream covers stop polling while the stream is up and
// poll again when it is down (setStreamUp); chain reads (balances) always
// poll, as the chain tells no stream when funds arrive.
import { type Query, QueryClient, type QueryKey } from '@tanstack/react-query';
import type { LiveEventKind } from './live';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A failure says why at once; the next poll (or a click) tries again.
      retry: false,
      // Only polled reads refetch when the tab shows again (poll() says so).
      refetchOnWindowFocus: false,
      refetchIntervalInBackground: false,
    },
  },
});

/** POLL is how often what people act on refreshes: the inbox, an approval, deliveries. */
export const POLL = 2000;

/** streamUp says the event stream is connected: it, not polling, keeps the covered reads fresh. */
let streamUp = false;

/**
 * poll is the options of a read refreshed every ms while shown. covered
 * reads (what the event stream announces) stop while the stream is up.
 */
export function poll(ms: number = POLL, covered = true) {
  return {
    refetchInterval: () => every(ms, covered),
    refetchOnWindowFocus: true,
  } as const;
}

/** every is a polling interval under the policy: false (no polling) for covered reads while the stream is up. */
export const every = (ms: number, covered = true): number | false => (covered && streamUp ? false : ms);

/**
 * keys names every read of the cache. A key holds every input of its read
 * (filters, cursors are pages of the same key), so an answer is never shown
 * for other inputs; a prefix (keys.approvals) invalidates a whole family.
 */
export const keys = {
  approvals: ['approvals'] as const,
  pending: ['approvals', 'pending'] as const,
  decided: ['approvals', 'decided'] as const,
  approval: (id: string) => ['approval', id] as const,
  audit: (filter: { action: string; target: string }) => ['audit', filter] as const,
  auditChain: ['audit-chain'] as const,
  analytics: (from: string, to: string) => ['analytics', from, to] as const,
  users: ['users'] as const,
  apiKeys: ['keys'] as const,
  walletLabels: ['wallets', 'labels'] as const,
  wallets: ['wallets'] as const,
  walletList: (q: string) => ['wallets', 'list', q] as const,
  newestWallets: ['wallets', 'newest'] as const,
  wallet: (id: string) => ['wallet', id] as const,
  walletActivity: (id: string) => ['wallet', id, 'activity'] as const,
  walletHistory: (id: string, change: string) => ['wallet', id, 'history', change] as const,
  balances: ['balance'] as const,
  balance: (id: string) => ['balance', id] as const,
  transactions: ['transactions'] as const,
  transactionList: (filter: Record<string, string>) => ['transactions', 'list', filter] as const,
  recentTransactions: ['transactions', 'recent'] as const,
  feePayer: ['fee-payer'] as const,
  endpoints: ['webhooks'] as const,
  endpoint: (id: string) => ['webhook', id] as const,
  deliveryHeads: (endpointID: string) => ['deliveries', endpointID, 'head'] as const,
  deliveryHead: (endpointID: string, status: string) => ['deliveries', endpointID, 'head', status] as const,
  deliveryPages: (endpointID: string, status: string) => ['deliveries', endpointID, 'pages', status] as const,
  delivery: (id: string) => ['delivery', id] as const,
};

/**
 * cursorPages are the options of a list the API pages by cursor ("Load
 * more" appends the page after next_cursor). A list shown anew (another
 * filter, the page opened again) starts from its first page, as before:
 * its pages are dropped once nothing shows them.
 */
export const cursorPages = {
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (page: { next_cursor?: string | null }) => page.next_cursor ?? undefined,
  gcTime: 0,
};

/** invalidate marks reads stale and refetches those on screen. */
export function invalidate(...families: QueryKey[]) {
  return Promise.all(families.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}

/**
 * Reads names a set of cached reads: a family (a key prefix), optionally
 * narrowed by a predicate.
 */
type Reads = { queryKey: QueryKey; predicate?: (q: Query) => boolean };

/** APPROVALS are the inbox (pending and decided) and each approval's page. */
const APPROVALS: Reads[] = [{ queryKey: keys.approvals }, { queryKey: ['approval'] }];
/** DECIDED are the reads that show a decided approval's payment (its transaction_status). */
const DECIDED: Reads[] = [{ queryKey: keys.decided }, { queryKey: ['approval'] }];
/** WALLET is a wallet's page (its balance and activity), not its history (policy changes, freezes). */
const WALLET: Reads = { queryKey: ['wallet'], predicate: (q) => q.queryKey[2] !== 'history' };
/** ANALYTICS is every range of analytics: the overview's spend today, the analytics page. */
const ANALYTICS: Reads = { queryKey: ['analytics'] };
/** MONEY is what a payment moves: the transaction lists (the overview's newest), the chain balances, the fee payer. */
const MONEY: Reads[] = [{ queryKey: keys.transactions }, { queryKey: keys.balances }, { queryKey: keys.feePayer }, WALLET, ANALYTICS];

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
  // Refused by the policy: no transaction, only the analytics' blocked sends.
  'tx.blocked': [ANALYTICS],
  // An x402 payment that moved nothing: its reservation is released.
  'x402.expired': [...MONEY, ...DECIDED],
  // A delivery that gave up: the endpoints' health and their delivery logs.
  'delivery.failed': [{ queryKey: keys.endpoints }, { queryKey: ['webhook'] }, { queryKey: ['deliveries'] }, { queryKey: ['delivery'] }],
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

/**
 * setStreamUp is where the event stream says it connected or dropped.
 * Connected, every read shown is fetched once (what changed while it was
 * down) and covered reads stop polling. Dropped, every read is marked
 * stale without a fetch: that sets covered reads polling again at their
 * interval (an observer reads its interval again when its query changes),
 * and nothing was missed before the drop.
 */
export function setStreamUp(up: boolean) {
  if (up === streamUp) return Promise.resolve();
  streamUp = up;
  return queryClient.invalidateQueries({ refetchType: up ? 'active' : 'none' });
}
