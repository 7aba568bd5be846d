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
import { QueryClient, type QueryKey } from '@tanstack/react-query';

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

/** PAYMENT_READS are what a payment's progress changes: its lists, the wallets' balances and spend. */
const PAYMENT_READS: QueryKey[] = [keys.transactions, keys.balances, ['wallet'], ['analytics'], keys.feePayer];

/** EVENT_READS maps an event kind's family (before the dot) to the reads it makes stale. */
const EVENT_READS: Record<string, QueryKey[]> = {
  approval: [keys.approvals, ['approval'], ...PAYMENT_READS],
  tx: PAYMENT_READS,
  x402: PAYMENT_READS,
  delivery: [keys.endpoints, ['deliveries'], ['delivery']],
  wallet: [keys.wallets, ['wallet']],
};

/**
 * liveEvent is where the event stream reports an event (its kind, such as
 * approval.pending or tx.sent): the reads it changes refetch if shown.
 */
export function liveEvent(kind: string) {
  return invalidate(...(EVENT_READS[kind.split('.')[0]] ?? []));
}

/**
 * setStreamUp is where the event stream says it connected or dropped. Either
 * way every read catches up once; then covered reads poll only while it is down.
 */
export function setStreamUp(up: boolean) {
  streamUp = up;
  return queryClient.invalidateQueries();
}
