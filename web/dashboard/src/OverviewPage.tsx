import { useState } from 'react';
import { type UseQueryResult, useQueries, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type Agent, type Analytics, type Approval, type Balance, type Session, listAgents, listTransactions } from './api';
import { type FeePayer, fundFeePayer, getBalance, getDaySpend, getFeePayer, limited, setFeePayer } from './api-overview';
import { errorText, short, usdc, when } from './format';
import { invalidate, keys, poll, queryClient } from './queries';
import './overview.css';

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

type Loaded<T> = { data: T | null; error: string };
/** BalanceRead is a wallet's last good balance and the latest read's failure, if it failed. */
type BalanceRead = { balance: Balance | null; error: string };

const amount = (n: number, digits = 6) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
/** sol shows whole lamports (9 decimals), so a tiny balance never rounds to 0. */
const sol = (n: number) => `${amount(n, 9)} SOL`;

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

  const lists = [wallets, spend, txs, feePayer];
  const at = Math.max(...lists.map((r) => Math.max(r.dataUpdatedAt, r.errorUpdatedAt)));
  const busy = lists.some((r) => r.isFetching) || reads.some((r) => r.isFetching);
  // A click mid-round starts the lists over; balances keep their pace, but those that failed are read again.
  const refresh = () => {
    void invalidate(keys.newestWallets, keys.analytics(today, today), keys.recentTransactions, keys.feePayer);
    void queryClient.refetchQueries({ queryKey: keys.balances, type: 'active', predicate: (q) => q.state.status === 'error' });
  };

  return {
    wallets: loaded(wallets),
    spend: loaded(spend),
    txs: loaded(txs),
    feePayer: loaded(feePayer),
    balances,
    updated: at > 0 ? new Date(at) : null,
    busy,
    refresh,
  };
}

/** OverviewPage is the account at a glance: network, wallets, what waits and what went out. */
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
    <main className="wide overview">
      <div className="ov-head">
        <h1>Overview</h1>
        <p className="ov-updated">
          {o.updated ? `Updated ${o.updated.toISOString().slice(11, 19)} UTC` : 'Loading…'}
          {/* Never disabled: a disabled button would drop the keyboard's focus; a click mid-round starts over. */}
          <button type="button" onClick={o.refresh} aria-busy={o.busy}>
            {o.busy ? 'Refreshing…' : 'Refresh'}
          </button>
        </p>
      </div>

      <Network network={session.network} />

      <div className="ov-grid">
        {sponsored ? (
          <FeePayerCard fp={fp} error={o.feePayer.error} session={session} onChange={o.refresh} />
        ) : (
          <section className={`ov-card ov-low${low.length > 0 ? ' ov-alert' : ''}`} aria-labelledby="ov-low" data-section="low-sol">
            <h2 id="ov-low">{low.length > 0 ? `⚠ Low on SOL for fees (${low.length})` : 'Low on SOL for fees'}</h2>
            {agents === null ? (
              <p className="notice">{o.wallets.error ? 'Unknown: the wallets could not be loaded.' : 'Loading…'}</p>
            ) : agents.length === 0 ? (
              <p className="notice">None: no wallets yet.</p>
            ) : low.length === 0 ? (
              <p className="notice">
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
                <ul className="ov-list">
                  {low.map((a) => (
                    <li key={a.id} data-wallet={a.id}>
                      <Link to="/wallets/$id" params={{ id: a.id }}>
                        {a.label}
                      </Link>{' '}
                      <code title={a.pubkey}>{short(a.pubkey)}</code> <strong>{sol(o.balances.get(a.id)?.balance?.sol ?? 0)}</strong>
                    </li>
                  ))}
                </ul>
              </>
            )}
            {unread.length > 0 && (
              <p className="ov-unread">
                Not checked: the balance of {unread.length > 5 ? `${unread.length} wallets` : unread.map((a) => a.label).join(', ')} could not be
                read.
              </p>
            )}
            {session.role === 'owner' && fp !== null && <SponsorOn onChange={o.refresh} />}
          </section>
        )}

        <Pending pending={pending} />

        <section className="ov-card ov-wide" aria-labelledby="ov-wallets">
          <h2 id="ov-wallets">Wallets</h2>
          {o.wallets.error && <p className="error">Could not load wallets: {o.wallets.error}</p>}
          {o.spend.error && <p className="error">Could not load today's spend: {o.spend.error}</p>}
          {agents === null ? (
            !o.wallets.error && <p className="notice">Loading…</p>
          ) : agents.length === 0 ? (
            <p className="notice">No wallets yet: create one with POST /agents.</p>
          ) : (
            <ul className="ov-wallets" aria-label="Wallets">
              {agents.map((a) => (
                <WalletCard key={a.id} agent={a} read={o.balances.get(a.id)} spent={spentToday(o.spend.data, a.id)} sponsored={sponsored} />
              ))}
            </ul>
          )}
          <p className="ov-more">
            {o.wallets.data?.more && `Showing the newest ${WALLETS_SHOWN}. `}
            <Link to="/wallets">All wallets</Link>
          </p>
        </section>

        <section className="ov-card ov-wide" aria-labelledby="ov-txs">
          <h2 id="ov-txs">Recent transactions</h2>
          {o.txs.error && <p className="error">Could not load transactions: {o.txs.error}</p>}
          {o.txs.data === null ? (
            !o.txs.error && <p className="notice">Loading…</p>
          ) : o.txs.data.length === 0 ? (
            <p className="notice">No transactions yet.</p>
          ) : (
            <ul className="ov-txs" aria-label="Recent transactions">
              {o.txs.data.map((t) => (
                <li key={t.id} data-signature={t.signature}>
                  <strong>{usdc(t.amount)}</strong>
                  <span className={`badge ${t.status === 'confirmed' ? 'sent' : t.status === 'failed' ? 'rejected' : 'pending'}`}>{t.status}</span>
                  <span>
                    {label.get(t.wallet_id) ?? short(t.wallet_id)} to <code title={t.counterparty}>{short(t.counterparty)}</code>
                  </span>
                  {t.memo && <span className="memo">“{t.memo}”</span>}
                  <span className="ov-time">{when(t.created_at)}</span>
                </li>
              ))}
            </ul>
          )}
          <p className="ov-more">
            <Link to="/transactions">All transactions</Link>
          </p>
        </section>
      </div>
    </main>
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
    <section className="ov-network live" aria-label="Network" data-network="mainnet">
      <strong>Mainnet: REAL MONEY</strong>
      <span>Every payment sent or approved in this account moves real USDC.</span>
    </section>
  ) : (
    <section className="ov-network test" aria-label="Network" data-network="devnet">
      <strong>Devnet: test tokens</strong>
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
      <span className="ov-unavailable" title={read.error}>
        unavailable
      </span>
    ) : (
      '…'
    );
  return (
    <li className={`ov-wallet ${a.state}`} data-wallet={a.id}>
      <div className="ov-wallet-top">
        <Link to="/wallets/$id" params={{ id: a.id }}>
          {a.label}
        </Link>
        <span className={`ov-state ${a.state}`}>{a.state}</span>
      </div>
      <code title={a.pubkey}>{short(a.pubkey)}</code>
      <dl className="ov-balance">
        <div>
          <dt>USDC</dt>
          <dd data-field="usdc">{value(b?.usdc, usdc)}</dd>
        </div>
        <div>
          <dt>SOL</dt>
          <dd data-field="sol" className={b && b.sol < LOW_SOL && !sponsored ? 'ov-low-value' : undefined}>
            {value(b?.sol, sol)}
          </dd>
        </div>
      </dl>
      {b && read?.error && (
        <p className="notice ov-stale" title={read.error}>
          Balance not refreshed: {read.error}
        </p>
      )}
      <SpendMeter label={a.label} spent={spent} limit={a.policy.daily_limit_usdc} />
    </li>
  );
}

/** SpendMeter is today's (UTC) spend against the daily limit, amber from 80 %, red at the limit. */
function SpendMeter({ label, spent, limit }: { label: string; spent: number | null; limit: number }) {
  if (spent === null) return <p className="notice">Today's spend: unavailable</p>;
  const share = limit > 0 ? Math.min(1, spent / limit) : 1;
  const text = `${amount(spent)} of ${usdc(limit)} today`;
  return (
    <div className="ov-spend">
      <span data-field="spend">{text}</span>
      <div
        className={`ov-meter${share >= 1 ? ' full' : share >= 0.8 ? ' high' : ''}`}
        role="meter"
        aria-label={`${label}: spend today against the daily limit`}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={spent}
        aria-valuetext={text}
      >
        <i style={{ width: `${share * 100}%` }} />
      </div>
    </div>
  );
}

/** Pending is the approvals waiting for a person, newest first (App polls them). */
function Pending({ pending }: { pending: Approval[] | null }) {
  // App's list is one page of 50: at 50 there may be more.
  const count = pending === null ? '…' : pending.length >= 50 ? '50+' : String(pending.length);
  return (
    <section className={`ov-card${pending && pending.length > 0 ? ' ov-waiting' : ''}`} aria-labelledby="ov-pending" data-section="pending">
      <h2 id="ov-pending">
        Pending approvals{' '}
        <span className="ov-count" data-field="pending-count">
          {count}
        </span>
      </h2>
      {pending === null ? (
        <p className="notice">Loading…</p>
      ) : pending.length === 0 ? (
        <p className="notice">Nothing waits for a decision.</p>
      ) : (
        <ul className="ov-list">
          {pending.slice(0, APPROVALS_SHOWN).map((a) => (
            <li key={a.id} data-approval={a.id}>
              <Link to="/approvals/$id" params={{ id: a.id }}>
                {usdc(a.amount)}
              </Link>{' '}
              from {a.agent_label} to <code title={a.to}>{short(a.to)}</code>
              {a.memo && <span className="memo"> “{a.memo}”</span>}
            </li>
          ))}
        </ul>
      )}
      <p className="ov-more">
        {pending && pending.length > APPROVALS_SHOWN && `${pending.length - APPROVALS_SHOWN}${pending.length >= 50 ? '+' : ''} more. `}
        <Link to="/approvals">All pending approvals</Link>
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
    <div className="ov-sponsor-off">
      <p className="notice">Fee sponsorship is off: each wallet pays its own fees in SOL.</p>
      <button type="button" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: true }))}>
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
    <section className={`ov-card ov-low ov-fee-payer${fp.low ? ' ov-alert' : ''}`} aria-labelledby="ov-fp" data-section="fee-payer">
      <h2 id="ov-fp">{fp.low ? '⚠ Fee payer low on SOL' : 'Fee payer'}</h2>
      <p>Pays the network fee, and a new recipient's token account rent, for every wallet's sends: the wallets need no SOL.</p>
      <dl className="ov-balance">
        <div>
          <dt>Address</dt>
          <dd>
            <code title={fp.address ?? ''} data-field="fee-payer-address">
              {fp.address ? short(fp.address) : '—'}
            </code>
          </dd>
        </div>
        <div>
          <dt>SOL</dt>
          <dd data-field="fee-payer-sol" className={fp.low ? 'ov-low-value' : undefined}>
            {fp.sol === null ? <span className="ov-unavailable">unavailable</span> : sol(fp.sol)}
          </dd>
        </div>
      </dl>
      <div className="ov-spend">
        <span data-field="fee-payer-spend">
          {text} ({fp.transactions_today} {fp.transactions_today === 1 ? 'transaction' : 'transactions'})
        </span>
        <div
          className={`ov-meter${share >= 1 ? ' full' : share >= 0.8 ? ' high' : ''}`}
          role="meter"
          aria-label="Fee payer: spend today against the daily budget"
          aria-valuemin={0}
          aria-valuemax={fp.daily_budget_sol}
          aria-valuenow={fp.spent_today_sol}
          aria-valuetext={text}
        >
          <i style={{ width: `${share * 100}%` }} />
        </div>
      </div>
      {fp.low && (
        <p data-field="fee-payer-warning">
          Its SOL is below one day's budget ({sol(fp.daily_budget_sol)}): send SOL to <code>{fp.address}</code> before sends fail for want of fees.
        </p>
      )}
      {error && (
        <p className="notice ov-stale" title={error}>
          Not refreshed: {error}
        </p>
      )}
      {owner && (
        <div className="ov-fp-actions">
          <form
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
              inputMode="decimal"
              autoComplete="off"
              value={budget}
              aria-invalid={budgetIssue !== ''}
              onChange={(e) => setBudget(e.target.value)}
            />
            <button type="submit" disabled={busy || budgetIssue !== ''}>
              Save
            </button>
          </form>
          {session.local_chain && (
            <form
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
                inputMode="decimal"
                autoComplete="off"
                value={fund}
                aria-invalid={fundIssue !== ''}
                onChange={(e) => setFund(e.target.value)}
              />
              <button type="submit" disabled={busy || fundIssue !== ''}>
                Fund
              </button>
            </form>
          )}
          <button type="button" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: false }))}>
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
