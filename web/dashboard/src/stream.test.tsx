// The event stream's bridge to the query cache, with a fake EventSource:
// which reads each event makes stale, and polling off while live, on while down.
import { QueryClientProvider, useQuery } from '@tanstack/react-query';
import { act, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toast } from './components/Toast';
import { type Live, SEEN, openLive } from './live';
import { analyticsKeys } from './services/analytics';
import { approvalKeys } from './services/approvals';
import { feePayerKeys } from './services/feePayer';
import { every, poll, queryClient } from './services/queryClient';
import { transactionKeys } from './services/transactions';
import { userKeys } from './services/users';
import { walletKeys } from './services/wallets';
import { webhookKeys } from './services/webhooks';
import { StreamStatus, follow, useLiveStream } from './stream';

vi.mock('./components/Toast', () => ({ toast: vi.fn() }));

/** FakeSource is an EventSource the test opens, feeds and fails by hand. */
class FakeSource {
  static CONNECTING = 0 as const;
  static OPEN = 1 as const;
  static CLOSED = 2 as const;
  static opened: FakeSource[] = [];
  readyState: number = FakeSource.CONNECTING;
  onopen: ((e: Event) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  private listeners = new Map<string, Set<(e: Event) => void>>();
  constructor(public url: string) {
    FakeSource.opened.push(this);
  }
  addEventListener(type: string, fn: (e: Event) => void) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(fn);
  }
  close() {
    this.readyState = FakeSource.CLOSED;
  }
  /** open is the server answering 200. */
  open() {
    this.readyState = FakeSource.OPEN;
    this.onopen?.(new Event('open'));
  }
  /** send is one server-sent event. */
  send(type: string, data: unknown, id = '') {
    const e = new MessageEvent(type, { data: JSON.stringify(data), lastEventId: id });
    this.listeners.get(type)?.forEach((fn) => fn(e));
  }
  /** drop is the connection lost (a close event, a restart, the network): EventSource retries by itself. */
  drop() {
    this.readyState = FakeSource.CONNECTING;
    this.onerror?.(new Event('error'));
  }
  /** refuse is the server refusing the stream (401, 429, 503): EventSource gives up. */
  refuse() {
    this.readyState = FakeSource.CLOSED;
    this.onerror?.(new Event('error'));
  }
}

const open = (): Live => openLive({ EventSource: FakeSource as unknown as typeof EventSource, reopenAfterMs: 0 });
const event = (kind: string, data: Record<string, unknown> = {}) => ({ event: kind, event_id: 'evt_1', timestamp: '2026-01-01T00:00:00Z', data });

/** stale lists which of the named reads the last event made stale. */
const stale = (named: Record<string, readonly unknown[]>) =>
  Object.entries(named)
    .filter(([, key]) => queryClient.getQueryState(key)?.isInvalidated)
    .map(([name]) => name)
    .sort();

const READS = {
  pending: approvalKeys.pending(),
  decided: approvalKeys.decided(),
  approval: approvalKeys.detail('ap_1'),
  transactions: transactionKeys.recent(),
  balance: walletKeys.balance('w1'),
  wallet: walletKeys.detail('w1'),
  activity: walletKeys.activity('w1'),
  history: walletKeys.history('w1', 'x'),
  ledger: walletKeys.ledger('w1', 'days'),
  differences: walletKeys.differences('w1'),
  analytics: analyticsKeys.range('2026-01-01', '2026-01-01'),
  feePayer: feePayerKeys.all,
  endpoints: webhookKeys.endpoints,
  endpoint: webhookKeys.endpoint('e1'),
  deliveries: webhookKeys.deliveryHead('e1', ''),
  users: userKeys.all,
};

/** fresh makes every named read fresh again. */
const fresh = () => {
  for (const key of Object.values(READS)) queryClient.setQueryData(key, {});
};

beforeEach(() => {
  FakeSource.opened = [];
  queryClient.clear();
  for (const key of Object.values(READS)) queryClient.setQueryData(key, {});
});
afterEach(() => queryClient.clear());

describe('follow', () => {
  let live: Live;
  let stop: () => void;
  beforeEach(() => {
    live = open();
    stop = follow(live);
  });
  afterEach(() => {
    stop();
    live.close();
  });

  it('polls covered reads only while the stream is down', () => {
    expect(every(2000)).toBe(2000);
    FakeSource.opened[0].open();
    expect(live.status).toBe('live');
    expect(every(2000)).toBe(false);
    expect(every(2000, false)).toBe(2000); // chain reads poll all the same
    // Going live, every read catches up once.
    expect(stale(READS)).toEqual(Object.keys(READS).sort());

    FakeSource.opened[0].refuse();
    expect(live.status).toBe('down');
    expect(every(2000)).toBe(2000);
  });

  it('turns polling back on when detached', () => {
    FakeSource.opened[0].open();
    expect(every(2000)).toBe(false);
    stop();
    expect(every(2000)).toBe(2000);
  });

  // WALLET is a wallet's page: its balance read, activity, ledger and differences (not its history).
  const WALLET = ['activity', 'differences', 'ledger', 'wallet'];
  const MONEY = [...WALLET, 'analytics', 'balance', 'feePayer', 'transactions'];
  const cases: [string, string[]][] = [
    ['approval.pending', [...WALLET, 'approval', 'decided', 'pending']],
    ['approval.approved', [...MONEY, 'approval', 'decided', 'pending']],
    ['approval.rejected', [...WALLET, 'analytics', 'approval', 'decided', 'pending']],
    ['approval.expired', [...WALLET, 'analytics', 'approval', 'decided', 'pending']],
    ['tx.sent', [...MONEY, 'approval', 'decided']],
    ['tx.failed', [...MONEY, 'approval', 'decided']],
    ['tx.received', MONEY],
    ['tx.receive_failed', MONEY],
    ['wallet.unexplained_outflow', MONEY],
    ['wallet.balance_mismatch', WALLET],
    ['tx.blocked', ['analytics']],
    ['x402.expired', [...MONEY, 'approval', 'decided']],
    ['mpp.expired', [...MONEY, 'approval', 'decided']],
    ['delivery.failed', ['deliveries', 'endpoint', 'endpoints']],
    ['user.added', ['users']],
  ];
  it.each(cases)('%s makes stale what it changes, and nothing else', (kind, want) => {
    FakeSource.opened[0].open();
    for (const key of Object.values(READS)) queryClient.setQueryData(key, {}); // fresh again
    FakeSource.opened[0].send(kind, event(kind), 'evt_1');
    expect(stale(READS)).toEqual([...want].sort());
  });

  it('announces a new owner on screen, and no other user', () => {
    const src = FakeSource.opened[0];
    src.open();
    vi.mocked(toast).mockClear();
    const added = (id: string, role: string, by: string) =>
      src.send(
        'user.added',
        { ...event('user.added', { address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', role, added_by: by }), event_id: id },
        id,
      );
    added('evt_7', 'viewer', 'key_1');
    expect(toast).not.toHaveBeenCalled();
    added('evt_8', 'owner', 'user:HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH');
    added('evt_9', 'owner', 'system');
    expect(vi.mocked(toast).mock.calls.map((c) => c[0])).toEqual([
      'New owner of this account: 9WzD…AWWM, added by HN7c…YWrH.',
      'New owner of this account: 9WzD…AWWM, added by the operator.',
    ]);
  });

  it('reads everything again on a reset', () => {
    FakeSource.opened[0].open();
    for (const key of Object.values(READS)) queryClient.setQueryData(key, {});
    FakeSource.opened[0].send('reset', { reason: 'too_old' }, 'evt_9');
    expect(stale(READS)).toEqual(Object.keys(READS).sort());
  });

  it('drops an event it has handled: a replay starts before the last one', () => {
    const src = FakeSource.opened[0];
    src.open();
    src.send('tx.blocked', event('tx.blocked'), 'evt_1');
    fresh();
    src.send('tx.blocked', event('tx.blocked')); // again, in a replay's overlap (no id)
    expect(stale(READS)).toEqual([]);
    src.send('tx.blocked', { ...event('tx.blocked'), event_id: 'evt_2' }, 'evt_2');
    expect(stale(READS)).toEqual(['analytics']);
  });

  it('remembers a bounded number of ids', () => {
    const src = FakeSource.opened[0];
    src.open();
    for (let i = 0; i <= SEEN; i++) src.send('tx.blocked', { ...event('tx.blocked'), event_id: `evt_${i}` }, `evt_${i}`);
    fresh();
    src.send('tx.blocked', { ...event('tx.blocked'), event_id: `evt_${SEEN}` }); // remembered
    expect(stale(READS)).toEqual([]);
    src.send('tx.blocked', { ...event('tx.blocked'), event_id: 'evt_0' }); // forgotten: the oldest
    expect(stale(READS)).toEqual(['analytics']);
  });

  it('reads everything again when it reconnects after an error', () => {
    const src = FakeSource.opened[0];
    src.open();
    src.send('tx.blocked', event('tx.blocked'), 'evt_1');
    fresh();
    src.drop();
    expect(live.status).toBe('live'); // EventSource retries: not down yet
    expect(stale(READS)).toEqual([]);
    src.open();
    expect(live.status).toBe('live');
    expect(stale(READS)).toEqual(Object.keys(READS).sort());
    expect(FakeSource.opened).toHaveLength(1); // the browser's own reconnection
  });
});

/** Polled is a covered read polled every 40 ms, counting its fetches. */
function Polled({ fetched }: { fetched: () => void }) {
  useQuery({
    queryKey: ['polled'],
    queryFn: async () => {
      fetched();
      return Date.now();
    },
    ...poll(40),
  });
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a covered read', () => {
  it('stops polling while live, and polls again when the stream drops, without a burst at the drop', async () => {
    let fetches = 0;
    const live = open();
    const stop = follow(live);
    render(
      <QueryClientProvider client={queryClient}>
        <Polled fetched={() => fetches++} />
      </QueryClientProvider>,
    );
    await waitFor(() => expect(fetches).toBeGreaterThanOrEqual(3)); // down: polled

    act(() => FakeSource.opened[0].open());
    await sleep(60); // the catch-up read that going live makes
    const live1 = fetches;
    await sleep(300);
    expect(fetches).toBe(live1); // live: not polled

    act(() => FakeSource.opened[0].refuse());
    expect(fetches).toBe(live1); // no read at the drop itself
    await waitFor(() => expect(fetches).toBeGreaterThanOrEqual(live1 + 3)); // down: polled again
    stop();
    live.close();
  });
});

function Frame() {
  return <StreamStatus status={useLiveStream(open)} />;
}

describe('useLiveStream', () => {
  it('opens one stream while mounted, says whether it is live, and closes it on unmount', () => {
    const { unmount } = render(<Frame />);
    expect(FakeSource.opened).toHaveLength(1);
    expect(screen.getByTestId('stream').textContent).toBe('Updating every few seconds');

    act(() => FakeSource.opened[0].open());
    expect(screen.getByTestId('stream').textContent).toBe('Live');
    expect(every(2000)).toBe(false);

    act(() => FakeSource.opened[0].refuse());
    expect(screen.getByTestId('stream').textContent).toBe('Updating every few seconds');

    unmount();
    expect(FakeSource.opened[0].readyState).toBe(FakeSource.CLOSED);
    expect(FakeSource.opened).toHaveLength(1);
    expect(every(2000)).toBe(2000);
  });

  it('turns polling back on when the signed-in frame goes while live', () => {
    const { unmount } = render(<Frame />);
    act(() => FakeSource.opened[0].open());
    expect(every(2000)).toBe(false);
    unmount();
    expect(FakeSource.opened[0].readyState).toBe(FakeSource.CLOSED);
    expect(every(2000)).toBe(2000);
  });
});
