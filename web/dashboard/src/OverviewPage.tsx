import { useState } from 'react';
import { type UseQueryResult, useQueries, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type Agent, type Analytics, type Approval, type Balance, type Session, type Transaction, listAgents, listTransactions } from './api';
import { type FeePayer, fundFeePayer, getBalance, getDaySpend, getFeePayer, limited, setFeePayer } from './api-overview';
import { amount, errorText, short, sols, usdc } from './format';
import { Empty } from './components/Empty';
import { Icon } from './components/Icon';
import { Skeleton, SkeletonRows } from './components/Skeleton';
import { Status } from './components/Status';
import { Time } from './components/Time';
import { invalidate, keys, poll, queryClient } from './queries';

/**
 * LOW_SOL is the SOL balance under which a wallet is flagged: every send
 * pays its fee in SOL (about 0.000005 SOL a signature) and, when the
 * recipient has no USDC token account yet, its rent (about 0.002 SOL).
 * 0.01 SOL covers a few first payments to new recipients; below it the
 * next sends may fail for want of fees.
 */
const LOW_SOL = 0.01;

/** REFRESH_MS paces the page: slower than the 2 s lists, as balances are chain reads. */
const REFRESH_MS = 12_000;
/** BALANCE_CONCURRENCY caps the balance reads in flight (each one is an RPC call). */
const BALANCE_CONCURRENCY = 4;
/**
 * BALANCE_READS_PER_MINUTE keeps a large account under the API's 120 reads
 * a minute per user (the approvals count already polls every 2 s): with
 * many wallets the balances refresh less often than the rest.
 */
const BALANCE_READS_PER_MINUTE = 50;
const WALLETS_SHOWN = 50;
const TRANSACTIONS_SHOWN = 10;
const APPROVALS_SHOWN = 5;
const FAILED_SHOWN = 5;

type Loaded<T> = { data: T | null; error: string };
/** BalanceRead is a wallet's last good balance and the latest read's failure, if it failed. */
type BalanceRead = { balance: Balance | null; error: string };

/** sol shows whole lamports (9 decimals), so a tiny balance never rounds to 0. */
const sol = (n: number) => sols(n);

/** loaded is a read as the page shows it: the last data, and the latest read's failure. */
const loaded = <T,>(r: UseQueryResult<T>): Loaded<T> => ({ data: r.data ?? null, error: r.error ? errorText(r.error) : '' });

/** readBalance reads one wallet's balance, BALANCE_CONCURRENCY at most at a time. */
const readBalance = limited(BALANCE_CONCURRENCY, getBalance);

/**
 * useOverview keeps the wallets, today's spend, the newest transactions and
 * the fee payer fresh every REFRESH_MS (not while the tab is hidden), and
 * each wallet's balance at a pace that keeps many wallets under the rate
 * limit; refresh() reads the lists now, and the balances whose last read failed.
 */
function useOverview() {
  const today = new Date().toISOString().slice(0, 10);
  const wallets = useQuery({
    queryKey: keys.newestWallets,
    queryFn: async () => {
      const r = await listAgents('', undefined, WALLETS_SHOWN);
      return { agents: r.agents, more: !!r.next_cursor };
    },
    ...poll(REFRESH_MS, false),
  });
  const spend = useQuery({ queryKey: keys.analytics(today, today), queryFn: () => getDaySpend(today), ...poll(REFRESH_MS) });
  const txs = useQuery({
    queryKey: keys.recentTransactions,
    queryFn: async () => (await listTransactions({}, undefined, TRANSACTIONS_SHOWN)).transactions,
    ...poll(REFRESH_MS),
  });
  // What failed today: the newest failed transactions of the UTC day.
  const failedFilter = { status: 'failed', since: `${today}T00:00:00Z` };
  const failed = useQuery({
    queryKey: keys.transactionList(failedFilter),
    queryFn: async () => {
      const r = await listTransactions(failedFilter, undefined, FAILED_SHOWN);
      return { transactions: r.transactions, more: !!r.next_cursor };
    },
    ...poll(REFRESH_MS),
  });
  // The fee payer's SOL is a chain read: polled whatever the event stream says.
  const feePayer = useQuery({ queryKey: keys.feePayer, queryFn: getFeePayer, ...poll(REFRESH_MS, false) });

  // Chain reads, one a wallet: all of them within a minute stay under BALANCE_READS_PER_MINUTE.
  const ids = wallets.data?.agents.map((a) => a.id) ?? [];
  const pace = Math.max(REFRESH_MS, (ids.length * 60_000) / BALANCE_READS_PER_MINUTE);
  const reads = useQueries({
    queries: ids.map((id) => ({ queryKey: keys.balance(id), queryFn: () => readBalance(id), ...poll(pace, false), staleTime: pace })),
  });
  const balances = new Map<string, BalanceRead>();
  reads.forEach((r, i) => {
    if (r.status !== 'pending') balances.set(ids[i], { balance: r.data ?? null, error: r.error ? errorText(r.error) : '' });
  });

  const lists = [wallets, spend, txs, feePayer, failed];
  const at = Math.max(...lists.map((r) => Math.max(r.dataUpdatedAt, r.errorUpdatedAt)));
  const busy = lists.some((r) => r.isFetching) || reads.some((r) => r.isFetching);
  // A click mid-round starts the lists over; balances keep their pace, but those that failed are read again.
  const refresh = () => {
    void invalidate(keys.newestWallets, keys.analytics(today, today), keys.recentTransactions, keys.feePayer, keys.transactionList(failedFilter));
    void queryClient.refetchQueries({ queryKey: keys.balances, type: 'active', predicate: (q) => q.state.status === 'error' });
  };

  return {
    wallets: loaded(wallets),
    spend: loaded(spend),
    txs: loaded(txs),
    feePayer: loaded(feePayer),
    failed: loaded(failed),
    balances,
    updated: at > 0 ? new Date(at) : null,
    busy,
    refresh,
  };
}

/** OverviewPage is the account at a glance: what needs me now, what was spent today against the limits, what failed. */
export function OverviewPage({ session, pending }: { session: Session; pending: Approval[] | null }) {
  const o = useOverview();
  const agents = o.wallets.data?.agents ?? null;
  const label = new Map((agents ?? []).map((a) => [a.id, a.label]));
  const low = (agents ?? []).filter((a) => {
    const b = o.balances.get(a.id)?.balance;
    return b != null && b.sol < LOW_SOL;
  });
  const unread = (agents ?? []).filter((a) => {
    const r = o.balances.get(a.id);
    return r != null && r.balance === null && r.error !== '';
  });
  const checking = agents !== null && agents.some((a) => !o.balances.has(a.id));
  // With fee sponsorship on, the wallets' SOL pays nothing: the fee payer's
  // card (and its warning) stands in for the per-wallet list.
  const fp = o.feePayer.data;
  const sponsored = fp !== null && fp.enabled;

  return (
    <main className="page">
      <div className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2">
        <h1 className="mb-2">Overview</h1>
        <p className="m-0 flex items-center gap-3 text-sm text-muted">
          {o.updated ? (
            `Updated ${o.updated.toISOString().slice(11, 19)} UTC`
          ) : (
            <span className="skeleton inline-block h-4 w-32" aria-hidden="true" />
          )}
          {/* Never disabled: a disabled button would drop the keyboard's focus; a click mid-round starts over. */}
          <button type="button" className="btn btn-sm" onClick={o.refresh} aria-busy={o.busy}>
            {o.busy ? 'Refreshing…' : 'Refresh'}
          </button>
        </p>
      </div>

      <Network network={session.network} />

      <Glance pending={pending} agents={agents} spend={o.spend.data} failed={o.failed.data} />

      <div className="mt-4 grid items-start gap-4 md:grid-cols-2">
        <Pending pending={pending} />

        {sponsored ? (
          <FeePayerCard fp={fp} error={o.feePayer.error} session={session} onChange={o.refresh} />
        ) : (
          <section className={`card ${low.length > 0 ? 'border-2 border-bad bg-bad-soft' : ''}`} aria-labelledby="ov-low" data-section="low-sol">
            <h2 id="ov-low" className={`mt-0 ${low.length > 0 ? 'text-bad' : ''}`}>
              {low.length > 0 ? `⚠ Low on SOL for fees (${low.length})` : 'Low on SOL for fees'}
            </h2>
            {agents === null ? (
              o.wallets.error ? (
                <p className="notice">Unknown: the wallets could not be loaded.</p>
              ) : (
                <Skeleton lines={2} />
              )
            ) : agents.length === 0 ? (
              <p className="notice">None: no wallets yet.</p>
            ) : low.length === 0 ? (
              <p className="notice flex items-center gap-1.5">
                {!checking && unread.length === 0 && <Icon name="check" className="size-4 text-ok" />}
                {checking
                  ? 'Checking balances…'
                  : unread.length === agents.length
                    ? 'Unknown: no balance could be read.'
                    : unread.length > 0
                      ? `None among the wallets read: each has at least ${sol(LOW_SOL)}.`
                      : `None: every wallet has at least ${sol(LOW_SOL)}.`}
              </p>
            ) : (
              <>
                <p>Sends from these may fail: fees and new recipients' token accounts are paid in SOL. Send each at least {sol(LOW_SOL)}.</p>
                <ul className="m-0 grid list-none gap-1 p-0">
                  {low.map((a) => (
                    <li key={a.id} data-wallet={a.id} className="border-b border-bad/20 py-1.5 wrap-anywhere last:border-0">
                      <Link to="/wallets/$id" params={{ id: a.id }} className="tap font-medium">
                        {a.label}
                      </Link>{' '}
                      <code title={a.pubkey}>{short(a.pubkey)}</code>{' '}
                      <strong className="tabular-nums">{sol(o.balances.get(a.id)?.balance?.sol ?? 0)}</strong>
                    </li>
                  ))}
                </ul>
              </>
            )}
            {unread.length > 0 && (
              <p className="warn">
                Not checked: the balance of {unread.length > 5 ? `${unread.length} wallets` : unread.map((a) => a.label).join(', ')} could not be
                read.
              </p>
            )}
            {session.role === 'owner' && fp !== null && <SponsorOn onChange={o.refresh} />}
          </section>
        )}
      </div>

      <section className="card mt-4" aria-labelledby="ov-wallets">
        <h2 id="ov-wallets">Wallets</h2>
        {o.wallets.error && <p className="error">Could not load wallets: {o.wallets.error}</p>}
        {o.spend.error && <p className="error">Could not load today's spend: {o.spend.error}</p>}
        {agents === null ? (
          !o.wallets.error && <SkeletonRows rows={2} height="h-28" />
        ) : agents.length === 0 ? (
          <Empty title="No wallets yet: create one on the Wallets page (or with POST /agents).">
            Each wallet has its own address, balance and policy. <Link to="/wallets">Go to Wallets</Link>
          </Empty>
        ) : (
          <ul className="m-0 grid list-none grid-cols-[repeat(auto-fill,minmax(min(100%,16rem),1fr))] gap-3 p-0" aria-label="Wallets">
            {agents.map((a) => (
              <WalletCard key={a.id} agent={a} read={o.balances.get(a.id)} spent={spentToday(o.spend.data, a.id)} sponsored={sponsored} />
            ))}
          </ul>
        )}
        <p className="mt-3 mb-0">
          {o.wallets.data?.more && `Showing the newest ${WALLETS_SHOWN}. `}
          <Link to="/wallets" className="tap">
            All wallets
          </Link>
        </p>
      </section>

      <section className="card mt-4" aria-labelledby="ov-txs">
        <h2 id="ov-txs">Recent transactions</h2>
        {o.txs.error && <p className="error">Could not load transactions: {o.txs.error}</p>}
        {o.txs.data === null ? (
          !o.txs.error && <SkeletonRows rows={3} height="h-10" />
        ) : o.txs.data.length === 0 ? (
          <Empty title="No transactions yet.">Payments your agents send appear here as they go out.</Empty>
        ) : (
          <ul className="m-0 list-none p-0" aria-label="Recent transactions">
            {o.txs.data.map((t) => (
              <TxRow key={t.id} t={t} wallet={label.get(t.wallet_id) ?? short(t.wallet_id)} />
            ))}
          </ul>
        )}
        <p className="mt-3 mb-0">
          <Link to="/transactions" className="tap">
            All transactions
          </Link>
        </p>
      </section>
    </main>
  );
}

/**
 * TxRow is a transaction in one line: amount, status, wallet and recipient,
 * memo, time. On a phone it is the transactions page's card: who paid whom
 * beside the amount, the memo beside the status, then when.
 */
function TxRow({ t, wallet }: { t: Transaction; wallet: string }) {
  return (
    <li
      data-signature={t.signature}
      className="flex min-w-0 flex-wrap items-baseline gap-x-3 gap-y-1 border-b border-line py-2 last:border-0 max-sm:grid max-sm:grid-cols-[minmax(0,1fr)_auto] max-sm:items-start max-sm:gap-y-0.5 max-sm:[grid-template-areas:'who_amount'_'memo_status'_'when_when']"
    >
      <strong className="min-w-28 text-right whitespace-nowrap tabular-nums max-sm:min-w-0 max-sm:[grid-area:amount]">{usdc(t.amount)}</strong>
      <Status status={t.status} className="max-sm:justify-self-end max-sm:[grid-area:status]" />
      <span className="min-w-0 wrap-anywhere max-sm:[grid-area:who]">
        {wallet} to{' '}
        <code title={t.counterparty} className="whitespace-nowrap">
          {short(t.counterparty)}
        </code>
      </span>
      {t.memo && <span className="memo min-w-0 wrap-anywhere text-muted max-sm:[grid-area:memo]">“{t.memo}”</span>}
      <Time iso={t.created_at} className="basis-full text-sm text-muted max-sm:[grid-area:when] sm:ml-auto sm:basis-auto" />
    </li>
  );
}

/**
 * Glance answers three questions in three figures: what waits for a
 * decision, how much went out today against the wallets' daily limits, and
 * what failed or was blocked today.
 */
function Glance({
  pending,
  agents,
  spend,
  failed,
}: {
  pending: Approval[] | null;
  agents: Agent[] | null;
  spend: Analytics | null;
  failed: { transactions: Transaction[]; more: boolean } | null;
}) {
  const waiting = pending?.length ?? null;
  const spent = spend ? spend.spend.filter((s) => s.day === spend.to).reduce((n, s) => n + s.amount_usdc, 0) : null;
  const limit = agents ? agents.reduce((n, a) => n + a.policy.daily_limit_usdc, 0) : null;
  const share = spent !== null && limit ? Math.min(1, spent / limit) : 0;
  const blocks = spend ? spend.blocked.reduce((n, b) => n + b.count, 0) : null;
  const fails = failed ? failed.transactions.length : null;
  const figure = 'm-0 text-3xl font-bold tabular-nums';
  const box = 'card grid content-start gap-1';
  return (
    <section className="mt-4 grid gap-4 sm:grid-cols-3" aria-label="At a glance">
      <div className={`${box} ${waiting ? 'border-warn/60 bg-warn-soft' : ''}`}>
        <h2 className="m-0 text-sm font-semibold text-muted">Needs you now</h2>
        {waiting === null ? (
          <div className="skeleton h-9 w-16" aria-hidden="true" />
        ) : (
          <p className={`${figure} ${waiting ? 'text-warn' : ''}`}>{waiting >= 50 ? '50+' : waiting}</p>
        )}
        <p className="m-0 text-sm">
          {waiting ? (
            <>
              {waiting === 1 ? 'approval waits' : 'approvals wait'} for a decision. <Link to="/approvals">Review</Link>
            </>
          ) : (
            <span className="notice">no approval waits</span>
          )}
        </p>
      </div>
      <div className={box}>
        <h2 className="m-0 text-sm font-semibold text-muted">Spent today (UTC)</h2>
        {spent === null || limit === null ? (
          <div className="skeleton h-9 w-32" aria-hidden="true" />
        ) : (
          <>
            <p className={figure}>
              {amount(spent)} <span className="text-base font-medium text-muted">USDC</span>
            </p>
            <Meter
              share={share}
              label="All wallets: spent today against their daily limits"
              max={limit}
              value={spent}
              text={`${usdc(spent)} of ${usdc(limit)}`}
            />
            <p className="m-0 text-sm text-muted">of {usdc(limit)}, the sum of the shown wallets' daily limits</p>
          </>
        )}
      </div>
      <div className={`${box} ${fails || blocks ? 'border-bad/60 bg-bad-soft' : ''}`}>
        <h2 className="m-0 text-sm font-semibold text-muted">Failed or blocked today</h2>
        {fails === null || blocks === null ? (
          <div className="skeleton h-9 w-16" aria-hidden="true" />
        ) : (
          <>
            <p className={`${figure} ${fails || blocks ? 'text-bad' : ''}`}>
              {fails + blocks}
              {failed?.more ? '+' : ''}
            </p>
            <p className="m-0 text-sm">
              {fails || blocks ? (
                <>
                  <Link to="/transactions" search={{ status: 'failed' }} className="tap">
                    {fails}
                    {failed?.more ? '+' : ''} failed
                  </Link>
                  {' · '}
                  <Link to="/audit" search={{ action: 'send.blocked' }} className="tap">
                    {blocks} blocked by a policy
                  </Link>
                </>
              ) : (
                <span className="notice">nothing failed, nothing blocked</span>
              )}
            </p>
          </>
        )}
      </div>
    </section>
  );
}

/** Meter is a share of a limit as a bar: green, amber from 80 %, red at the limit. */
function Meter({
  share,
  label,
  max,
  value,
  text,
  className = '',
}: {
  share: number;
  label: string;
  max: number;
  value: number;
  text: string;
  className?: string;
}) {
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : '';
  return (
    <div
      className={`ov-meter ${level} h-2 overflow-hidden rounded-full bg-subtle ${className}`}
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
      aria-valuetext={text}
    >
      <div className={`h-full ${level === 'full' ? 'bg-bad' : level === 'high' ? 'bg-warn' : 'bg-ok'}`} style={{ width: `${share * 100}%` }} />
    </div>
  );
}

/** spentToday is a wallet's spend on the analytics' (single) day, or null when unknown. */
function spentToday(a: Analytics | null, id: string): number | null {
  if (!a) return null;
  return a.spend.filter((s) => s.wallet_id === id && s.day === a.to).reduce((n, s) => n + s.amount_usdc, 0);
}

/** Network says loudly whether payments here move real money. */
function Network({ network }: { network: Session['network'] }) {
  return network === 'mainnet' ? (
    <section
      className="flex flex-wrap items-baseline gap-x-4 gap-y-1 rounded-lg border border-live bg-live px-4 py-3 text-on-live"
      aria-label="Network"
      data-network="mainnet"
    >
      <strong className="text-xl tracking-wide">Mainnet: REAL MONEY</strong>
      <span>Every payment sent or approved in this account moves real USDC.</span>
    </section>
  ) : (
    <section
      className="flex flex-wrap items-baseline gap-x-4 gap-y-1 rounded-lg border border-ok/40 bg-ok-soft px-4 py-3 text-ok"
      aria-label="Network"
      data-network="devnet"
    >
      <strong className="text-lg">Devnet: test tokens</strong>
      <span>Payments in this account move devnet USDC, which has no value.</span>
    </section>
  );
}

function WalletCard({ agent: a, read, spent, sponsored }: { agent: Agent; read: BalanceRead | undefined; spent: number | null; sponsored: boolean }) {
  const b = read?.balance ?? null;
  const value = (n: number | undefined, show: (n: number) => string) =>
    b && n !== undefined ? (
      show(n)
    ) : read?.error ? (
      <span className="text-warn italic" title={read.error}>
        unavailable
      </span>
    ) : (
      '…'
    );
  const frozen = a.state === 'frozen';
  return (
    <li className={`grid min-w-0 gap-1.5 rounded-md border border-line p-3 ${frozen ? 'bg-info-soft' : 'bg-surface'}`} data-wallet={a.id}>
      <div className="flex min-w-0 items-center justify-between gap-2">
        <Link to="/wallets/$id" params={{ id: a.id }} className="tap min-w-0 py-1 font-semibold wrap-anywhere">
          {a.label}
        </Link>
        <Status status={a.state} className="ov-state text-xs uppercase" />
      </div>
      <code title={a.pubkey} className="text-muted">
        {short(a.pubkey)}
      </code>
      <dl className="my-1 grid grid-cols-2 gap-2 wrap-anywhere tabular-nums">
        <div>
          <dt className="text-xs font-semibold text-muted">USDC</dt>
          <dd data-field="usdc">{value(b?.usdc, usdc)}</dd>
        </div>
        <div>
          <dt className="text-xs font-semibold text-muted">SOL</dt>
          <dd data-field="sol" className={b && b.sol < LOW_SOL && !sponsored ? 'font-bold text-bad' : undefined}>
            {value(b?.sol, sol)}
          </dd>
        </div>
      </dl>
      {b && read?.error && (
        <p className="notice m-0 text-xs" title={read.error}>
          Balance not refreshed: {read.error}
        </p>
      )}
      <SpendMeter label={a.label} spent={spent} limit={a.policy.daily_limit_usdc} />
    </li>
  );
}

/** SpendMeter is today's (UTC) spend against the daily limit, amber from 80 %, red at the limit. */
function SpendMeter({ label, spent, limit }: { label: string; spent: number | null; limit: number }) {
  if (spent === null) return <p className="notice m-0 text-sm">Today's spend: unavailable</p>;
  const share = limit > 0 ? Math.min(1, spent / limit) : 1;
  const text = `${amount(spent)} of ${usdc(limit)} today`;
  return (
    <div className="grid gap-1 text-sm">
      <span data-field="spend" className="tabular-nums">
        {text}
      </span>
      <Meter share={share} label={`${label}: spend today against the daily limit`} max={limit} value={spent} text={text} />
    </div>
  );
}

/** Pending is the approvals waiting for a person, newest first (App polls them). */
function Pending({ pending }: { pending: Approval[] | null }) {
  // App's list is one page of 50: at 50 there may be more.
  const count = pending === null ? '…' : pending.length >= 50 ? '50+' : String(pending.length);
  const waiting = pending !== null && pending.length > 0;
  return (
    <section className={`card ${waiting ? 'border-l-4 border-l-warn' : ''}`} aria-labelledby="ov-pending" data-section="pending">
      <h2 id="ov-pending" className="mt-0 flex items-center gap-2">
        Pending approvals{' '}
        <span
          className={`min-w-8 rounded-full px-2 text-center text-base tabular-nums ${waiting ? 'bg-accent text-on-accent' : 'bg-subtle text-muted'}`}
          data-field="pending-count"
        >
          {count}
        </span>
      </h2>
      {pending === null ? (
        <Skeleton lines={2} />
      ) : pending.length === 0 ? (
        <p className="notice flex items-center gap-1.5">
          <Icon name="check" className="size-4 text-ok" />
          Nothing waits for a decision.
        </p>
      ) : (
        <ul className="m-0 grid list-none gap-1 p-0">
          {pending.slice(0, APPROVALS_SHOWN).map((a) => (
            <li key={a.id} data-approval={a.id} className="border-b border-line py-1.5 wrap-anywhere last:border-0">
              <Link to="/approvals/$id" params={{ id: a.id }} className="tap font-semibold tabular-nums">
                {usdc(a.amount)}
              </Link>{' '}
              from {a.agent_label} to{' '}
              <code title={a.to} className="whitespace-nowrap">
                {short(a.to)}
              </code>
              {a.memo && <span className="text-muted"> “{a.memo}”</span>}
            </li>
          ))}
        </ul>
      )}
      <p className="mb-0">
        {pending && pending.length > APPROVALS_SHOWN && `${pending.length - APPROVALS_SHOWN}${pending.length >= 50 ? '+' : ''} more. `}
        <Link to="/approvals" className="tap">
          All pending approvals
        </Link>
      </p>
    </section>
  );
}

/** useAct runs one owner action at a time and keeps its failure to show. */
function useAct(onDone: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError('');
    try {
      await f();
      onDone();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, act };
}

/** SponsorOn offers owners fee sponsorship while it is off: one fee payer pays every wallet's fees. */
function SponsorOn({ onChange }: { onChange: () => void }) {
  const { busy, error, act } = useAct(onChange);
  return (
    <div className="mt-3">
      <p className="notice">Fee sponsorship is off: each wallet pays its own fees in SOL.</p>
      <button type="button" className="btn" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: true }))}>
        {busy ? 'Turning on…' : 'Turn on fee sponsorship'}
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * FeePayerCard is the fee payer with sponsorship on: its address, SOL and
 * today's spend against the daily budget, with a warning when its SOL is
 * below one day's budget (the API's `low`). Owners set the budget, turn it
 * off and, on a local chain, fund it.
 */
function FeePayerCard({ fp, error, session, onChange }: { fp: FeePayer; error: string; session: Session; onChange: () => void }) {
  const { busy, error: actError, act } = useAct(onChange);
  const [budget, setBudget] = useState(String(fp.daily_budget_sol));
  const [fund, setFund] = useState('1');
  const share = fp.daily_budget_sol > 0 ? Math.min(1, fp.spent_today_sol / fp.daily_budget_sol) : 1;
  const text = `${sol(fp.spent_today_sol)} of ${sol(fp.daily_budget_sol)} today`;
  const budgetIssue =
    /^\d+(\.\d{1,9})?$/.test(budget.trim()) && Number(budget) > 0 && Number(budget) <= 100 ? '' : 'Above 0 and at most 100 SOL, 9 decimals at most.';
  const fundIssue =
    /^\d+(\.\d{1,6})?$/.test(fund.trim()) && Number(fund) > 0 && Number(fund) <= 100 ? '' : 'Above 0 and at most 100 SOL, 6 decimals at most.';
  const owner = session.role === 'owner';
  return (
    <section className={`card ${fp.low ? 'border-2 border-bad bg-bad-soft' : ''}`} aria-labelledby="ov-fp" data-section="fee-payer">
      <h2 id="ov-fp" className={`mt-0 ${fp.low ? 'text-bad' : ''}`}>
        {fp.low ? '⚠ Fee payer low on SOL' : 'Fee payer'}
      </h2>
      <p>Pays the network fee, and a new recipient's token account rent, for every wallet's sends: the wallets need no SOL.</p>
      <dl className="my-2 grid grid-cols-2 gap-2">
        <div>
          <dt className="text-xs font-semibold text-muted">Address</dt>
          <dd>
            <code title={fp.address ?? ''} data-field="fee-payer-address">
              {fp.address ? short(fp.address) : '—'}
            </code>
          </dd>
        </div>
        <div>
          <dt className="text-xs font-semibold text-muted">SOL</dt>
          <dd data-field="fee-payer-sol" className={`tabular-nums ${fp.low ? 'font-bold text-bad' : ''}`}>
            {fp.sol === null ? <span className="text-warn italic">unavailable</span> : sol(fp.sol)}
          </dd>
        </div>
      </dl>
      <div className="grid gap-1 text-sm">
        <span data-field="fee-payer-spend" className="tabular-nums">
          {text} ({fp.transactions_today} {fp.transactions_today === 1 ? 'transaction' : 'transactions'})
        </span>
        <Meter
          share={share}
          label="Fee payer: spend today against the daily budget"
          max={fp.daily_budget_sol}
          value={fp.spent_today_sol}
          text={text}
        />
      </div>
      {fp.low && (
        <p data-field="fee-payer-warning">
          Its SOL is below one day's budget ({sol(fp.daily_budget_sol)}): send SOL to <code>{fp.address}</code> before sends fail for want of fees.
        </p>
      )}
      {error && (
        <p className="notice text-xs" title={error}>
          Not refreshed: {error}
        </p>
      )}
      {owner && (
        <div className="mt-3 grid gap-2">
          <form
            className="flex flex-wrap items-center gap-2"
            aria-label="Daily budget"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              void act(() => setFeePayer({ enabled: true, daily_budget_sol: Number(budget) }));
            }}
          >
            <label htmlFor="fp-budget">Daily budget (SOL)</label>
            <input
              id="fp-budget"
              className="w-28"
              inputMode="decimal"
              autoComplete="off"
              value={budget}
              aria-invalid={budgetIssue !== ''}
              onChange={(e) => setBudget(e.target.value)}
            />
            <button type="submit" className="btn" disabled={busy || budgetIssue !== ''}>
              Save
            </button>
          </form>
          {session.local_chain && (
            <form
              className="flex flex-wrap items-center gap-2"
              aria-label="Fund the fee payer on localnet"
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                void act(() => fundFeePayer(Number(fund)));
              }}
            >
              <label htmlFor="fp-fund">Fund on localnet (SOL)</label>
              <input
                id="fp-fund"
                className="w-28"
                inputMode="decimal"
                autoComplete="off"
                value={fund}
                aria-invalid={fundIssue !== ''}
                onChange={(e) => setFund(e.target.value)}
              />
              <button type="submit" className="btn" disabled={busy || fundIssue !== ''}>
                Fund
              </button>
            </form>
          )}
          <button type="button" className="btn justify-self-start" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: false }))}>
            Turn off fee sponsorship
          </button>
          {(budgetIssue || fundIssue) && <p className="field-error">{budgetIssue || fundIssue}</p>}
          {actError && (
            <p role="alert" className="error">
              {actError}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
