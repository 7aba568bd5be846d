// The dashboard's server state: one query cache (TanStack Query) and how
// often each read is refreshed. Each service module names its reads (typed
// query keys) and builds their options; liveReads.ts says which reads each
// live event makes stale.
//
// Polling policy: a page's reads refresh every few seconds while the page
// shows them and the tab is visible (never in a hidden tab), and at once
// when the tab shows again. An action invalidates the keys it changes.
// Reads the event stream covers stop polling while the stream is up and
// poll again when it is down (setStreamUp); chain reads (balances) always
// poll, as the chain tells no stream when funds arrive.
import {
  type DefaultError,
  InfiniteQueryObserver,
  type InfiniteQueryObserverOptions,
  type Query,
  QueryClient,
  type QueryKey,
} from '@tanstack/react-query';

/**
 * shareDates is TanStack Query's structural sharing taught the Date: an
 * answer equal to the one cached (dates to the millisecond) keeps the
 * cached objects, so a poll that changed nothing renders nothing again.
 */
export function shareDates(old: unknown, next: unknown): unknown {
  if (old === next) return old;
  if (old instanceof Date && next instanceof Date) return old.getTime() === next.getTime() ? old : next;
  if (Array.isArray(old) && Array.isArray(next)) {
    const items = next.map((v, i) => shareDates(old[i], v));
    return items.length === old.length && items.every((v, i) => v === old[i]) ? old : items;
  }
  if (plain(old) && plain(next)) {
    const keys = Object.keys(next);
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = shareDates(old[k], next[k]);
    return keys.length === Object.keys(old).length && keys.every((k) => k in old && out[k] === old[k]) ? old : out;
  }
  return next;
}

const plain = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/**
 * FRESH_MS is how long a read a route's loader warmed counts as fresh for
 * the page it was warmed for: the page shows the answer without asking the
 * API again. Any other read a page mounts is read again when stale, as
 * TanStack Query does.
 */
const FRESH_MS = 2_000;

/** warmedAt is, for each read a loader warmed, when its answer came (its dataUpdatedAt). */
const warmedAt = new WeakMap<object, number>();

/** fromLoader says the read's data is a loader's answer of less than FRESH_MS ago, made stale by nothing since. */
const fromLoader = (q: Query) => warmedAt.get(q) === q.state.dataUpdatedAt && !q.state.isInvalidated && Date.now() - q.state.dataUpdatedAt < FRESH_MS;

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A failure says why at once; the next poll (or a click) tries again.
      retry: false,
      // Only polled reads refetch when the tab shows again (poll() says so).
      refetchOnWindowFocus: false,
      refetchIntervalInBackground: false,
      // A page does not read again what its route's loader just read.
      refetchOnMount: (q) => !fromLoader(q),
      structuralSharing: shareDates,
    },
  },
});

// An answer that comes while no page shows its read is a loader's warm-up.
queryClient.getQueryCache().subscribe((e) => {
  if (e.type === 'updated' && e.action.type === 'success' && !e.action.manual && e.query.getObserversCount() === 0)
    warmedAt.set(e.query, e.query.state.dataUpdatedAt);
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
 * cursorPages are the options of a list the API pages by cursor ("Load
 * more" appends the page after nextCursor). A list shown anew (another
 * filter, the page opened again) starts from its first page, as before:
 * its pages are dropped once nothing shows them.
 */
export const cursorPages = {
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (page: { nextCursor: string | null }) => page.nextCursor ?? undefined,
  gcTime: 0,
};

/** invalidate marks reads stale and refetches those on screen. */
export function invalidate(...families: QueryKey[]) {
  return Promise.all(families.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
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

/**
 * warm starts a read a route's loader wants ready (ensureQueryData's
 * promise) without holding the navigation: the page shows at once, with
 * its skeleton, and says itself why a read failed.
 */
export function warm(...reads: Promise<unknown>[]): void {
  for (const r of reads) r.catch(() => {});
}

/** HOLD_MS is how long a list warmed for a page that never shows waits for it. */
const HOLD_MS = 10_000;

/**
 * warmList warms a list paged by cursor (ensureInfiniteQueryData) and
 * holds it until a page shows it. Such a list is dropped as soon as
 * nothing shows it (cursorPages' gcTime 0): its first page, answered before
 * the page rendered, would be dropped and read again.
 */
export function warmList<TPage, TData, TKey extends QueryKey, TParam>(
  options: InfiniteQueryObserverOptions<TPage, DefaultError, TData, TKey, TParam>,
): void {
  const read = queryClient.ensureInfiniteQueryData(options);
  const holder = new InfiniteQueryObserver(queryClient, options);
  const query = holder.getCurrentQuery();
  if (query.getObserversCount() > 0) return warm(read); // already shown
  // Answered while only the holder observes it: a warm-up all the same.
  warm(read.then(() => warmedAt.set(query, query.state.dataUpdatedAt)));
  const release = holder.subscribe(() => {});
  const shown = queryClient.getQueryCache().subscribe((e) => {
    if (e.type === 'observerAdded' && e.query === query && e.observer !== holder) stop();
  });
  const timer = setTimeout(stop, HOLD_MS);
  function stop() {
    clearTimeout(timer);
    shown();
    release();
  }
}
