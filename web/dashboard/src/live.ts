/**
 * The dashboard's live events: one EventSource on GET
 * /api/dashboard/v1/events (same origin, the session cookie), parsed into
 * typed messages. EventSource reconnects by itself and sends
 * Last-Event-ID, so the server replays what was missed; `status` turns
 * `down` when a reconnection fails (or the server refuses the stream:
 * signed out, too many streams, an outage), and then the page polls.
 * While down, a new EventSource is tried every `reopenAfterMs`, resuming
 * from the last event id seen.
 *
 * Delivery is at least once: a replay starts a little before the last
 * event seen (events commit out of the order of their times), so events
 * already handled are dropped by id. And a reconnection after an error
 * says `reset` (read everything again) once it is open: whatever a replay
 * cannot cover (past its bounds) is read again then.
 */

/** The path of the stream. */
export const EVENTS_PATH = '/api/dashboard/v1/events';

/** What the stream carries (the webhook event kinds, and failed deliveries). */
export type LiveEventKind =
  | 'approval.pending'
  | 'approval.vote'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.expired'
  | 'tx.sent'
  | 'tx.received'
  | 'tx.receive_failed'
  | 'wallet.unexplained_outflow'
  | 'wallet.balance_mismatch'
  | 'tx.blocked'
  | 'tx.failed'
  | 'x402.expired'
  | 'mpp.expired'
  | 'user.added'
  | 'delivery.failed';

export const LIVE_EVENT_KINDS: readonly LiveEventKind[] = [
  'approval.pending',
  'approval.vote',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'tx.sent',
  'tx.received',
  'tx.receive_failed',
  'wallet.unexplained_outflow',
  'wallet.balance_mismatch',
  'tx.blocked',
  'tx.failed',
  'x402.expired',
  'mpp.expired',
  'user.added',
  'delivery.failed',
];

/** One event: the same JSON as a webhook delivery's body. */
export interface LiveEvent {
  event: LiveEventKind;
  /** evt_… for events; the delivery's id for delivery.failed. */
  event_id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * What subscribers receive: an event, or `reset`: read everything again
 * (the server could not replay what was missed, or, with reason
 * `reconnected`, the stream reconnected after an error).
 */
export type LiveMessage = { type: 'event'; event: LiveEvent } | { type: 'reset'; reason: string };

export type LiveStatus = 'live' | 'down';

export interface LiveOptions {
  /** The stream's URL; EVENTS_PATH by default. */
  url?: string;
  /** How long to stay down before trying a new EventSource (default 30 s; 0 never). */
  reopenAfterMs?: number;
  /** The EventSource constructor (tests may pass another). */
  EventSource?: typeof EventSource;
}

export interface Live {
  /** Calls fn with every message until the returned function is called. */
  subscribe(fn: (m: LiveMessage) => void): () => void;
  /** Calls fn with every change of status until the returned function is called. */
  onStatus(fn: (s: LiveStatus) => void): () => void;
  readonly status: LiveStatus;
  /** Closes the stream for good. */
  close(): void;
}

/** SEEN is how many recent event ids the stream remembers to drop repeats (more than a replay holds). */
export const SEEN = 1000;

/** Recent is a bounded set of ids: the oldest is forgotten past `size`. */
class Recent {
  private ids = new Set<string>();
  constructor(private size: number) {}
  /** add remembers id, and says whether it was new. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.size) this.ids.delete(this.ids.values().next().value as string);
    return true;
  }
}

function parse<T>(raw: unknown): T | null {
  if (typeof raw !== 'string') return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

/** openLive opens the stream; it starts `down` until the server answers. */
export function openLive(opts: LiveOptions = {}): Live {
  const url = opts.url ?? EVENTS_PATH;
  const reopenAfter = opts.reopenAfterMs ?? 30_000;
  const ES = opts.EventSource ?? globalThis.EventSource;
  const messages = new Set<(m: LiveMessage) => void>();
  const statuses = new Set<(s: LiveStatus) => void>();
  let status: LiveStatus = 'down';
  let es: EventSource | null = null;
  let lastId = '';
  let errors = 0; // errors since the last open
  const seen = new Recent(SEEN);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const setStatus = (s: LiveStatus) => {
    if (s === status) return;
    status = s;
    statuses.forEach((fn) => fn(s));
  };
  const emit = (m: LiveMessage) => messages.forEach((fn) => fn(m));

  const stop = (reopen: boolean) => {
    es?.close();
    es = null;
    setStatus('down');
    if (reopen && !closed && reopenAfter > 0) {
      clearTimeout(timer);
      timer = setTimeout(start, reopenAfter);
    }
  };

  function start() {
    if (closed || !ES) return;
    const u = lastId ? `${url}${url.includes('?') ? '&' : '?'}last_event_id=${encodeURIComponent(lastId)}` : url;
    const source = new ES(u, { withCredentials: true });
    es = source;
    errors = 0;
    let reconnecting = false; // this source lost its connection and the browser retries
    source.onopen = () => {
      errors = 0;
      // Reopened while live: what the replay cannot cover is read again
      // (going live from down reads everything anyway: setStreamUp).
      const again = reconnecting && status === 'live';
      reconnecting = false;
      setStatus('live');
      if (again) emit({ type: 'reset', reason: 'reconnected' });
    };
    source.onerror = () => {
      // CLOSED: the server refused (401, 429, 503). CONNECTING: the
      // browser retries; a second error before an open is a failed
      // reconnection.
      errors++;
      reconnecting = true;
      if (source.readyState === ES.CLOSED || errors > 1) stop(true);
    };
    const onEvent = (e: Event) => {
      const m = e as MessageEvent;
      // A replay's events from before the last id come without one: the
      // last id stays.
      if (m.lastEventId) lastId = m.lastEventId;
      const ev = parse<LiveEvent>(m.data);
      if (ev && seen.add(ev.event_id)) emit({ type: 'event', event: ev });
    };
    for (const kind of LIVE_EVENT_KINDS) source.addEventListener(kind, onEvent);
    source.addEventListener('reset', (e) => {
      const m = e as MessageEvent;
      lastId = m.lastEventId;
      emit({ type: 'reset', reason: parse<{ reason: string }>(m.data)?.reason ?? '' });
    });
    source.addEventListener('close', (e) => {
      // The session ended: nothing to reconnect to. Otherwise (a new
      // role, an outage, a restart) EventSource reconnects by itself.
      if (parse<{ reason: string }>((e as MessageEvent).data)?.reason === 'session_ended') stop(false);
    });
  }

  start();
  return {
    subscribe(fn) {
      messages.add(fn);
      return () => messages.delete(fn);
    },
    onStatus(fn) {
      statuses.add(fn);
      return () => statuses.delete(fn);
    },
    get status() {
      return status;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      stop(false);
    },
  };
}
