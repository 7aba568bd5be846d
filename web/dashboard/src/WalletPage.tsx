import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { Agent, AuditEntry, Balance, Session } from './api';
import { type Policy, freezeAgent, fundWallet, getAgent, unfreezeAgent, walletApprovals, walletHistory, walletTransactions } from './api-wallets';
import { actor, errorText, short, sols, usdc } from './format';
import { ConfirmDialog } from './components/ConfirmDialog';
import { Empty } from './components/Empty';
import { Icon } from './components/Icon';
import { Skeleton, SkeletonRows } from './components/Skeleton';
import { Status } from './components/Status';
import { Time } from './components/Time';
import { toast } from './components/Toast';
import { Diff, PolicyEditor, PolicyView } from './PolicyEditor';
import { TxLinks, TxStatus } from './TransactionsPage';
import { amountProblem, changesOf } from './policy-draft';
import { invalidate, keys, poll, queryClient } from './queries';
import { usersQuery } from './api-users';
import { QR } from './qr';

/** StateBadge is a wallet's state, wherever the wallet appears. */
export function StateBadge({ state }: { state: Agent['state'] }) {
  return <Status status={state} testId="state" className="align-middle text-sm" />;
}

/** CopyButton copies text and says whether it could (the clipboard needs a secure page and leave). */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const shown = { idle: 'Copy', copied: 'Copied', failed: 'Copy failed: select the text' }[state];
  return (
    <button
      type="button"
      className="btn btn-sm"
      aria-label={state === 'idle' ? `Copy ${what}` : shown}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState('copied');
        } catch {
          setState('failed');
        }
        setTimeout(() => setState('idle'), 2500);
      }}
    >
      {shown}
    </button>
  );
}

/** Freeze stops every send at once (owners and approvers); only owners unfreeze. Both ask first. */
function Freeze({ agent, session, onChanged }: { agent: Agent; session: Session; onChanged: (a: Agent) => void }) {
  const frozen = agent.state === 'frozen';
  const may = frozen ? session.role === 'owner' : session.role === 'owner' || session.role === 'approver';
  const [confirming, setConfirming] = useState(false);
  const change = useMutation({
    mutationFn: () => (frozen ? unfreezeAgent(agent.id) : freezeAgent(agent.id)),
    onSuccess: (a) => {
      onChanged(a);
      setConfirming(false);
      toast(a.state === 'frozen' ? `${a.label} is frozen: every send is blocked.` : `${a.label} is active again.`);
    },
  });
  const busy = change.isPending;
  const error = change.error ? errorText(change.error) : '';
  const act = () => change.mutate();

  return (
    <section className={`card flex flex-wrap items-center gap-x-4 gap-y-2 ${frozen ? 'border-info/50 bg-info-soft' : ''}`} aria-label="Freeze">
      <div className="min-w-0 flex-1">
        <h2 className="mt-0 mb-1">{frozen ? 'Frozen' : 'Active'}</h2>
        <p className="m-0">
          {frozen ? 'Every send is blocked (wallet_frozen) until an owner unfreezes the wallet.' : 'Sends are decided by the policy below.'}
        </p>
        {!may && frozen && session.role === 'approver' && <p className="notice mt-1 mb-0">Only an owner can unfreeze it.</p>}
      </div>
      {may && (
        <button type="button" className={`btn ${frozen ? 'btn-primary' : 'btn-danger'}`} onClick={() => setConfirming(true)}>
          <Icon name={frozen ? 'check' : 'snow'} />
          {frozen ? 'Unfreeze…' : 'Freeze…'}
        </button>
      )}
      {/* The confirming button takes the focus, so the keyboard goes on from where it was. */}
      <ConfirmDialog
        open={confirming}
        title={frozen ? `Unfreeze ${agent.label}?` : `Freeze ${agent.label}?`}
        confirm={frozen ? 'Confirm unfreeze' : 'Confirm freeze'}
        tone={frozen ? 'primary' : 'danger'}
        busy={busy}
        error={error}
        onConfirm={act}
        onClose={() => setConfirming(false)}
      >
        <p className="m-0">{frozen ? 'Its agents can send again, within the policy.' : 'Every send is blocked until an owner unfreezes it.'}</p>
      </ConfirmDialog>
      {error && !confirming && (
        <p role="alert" className="error basis-full">
          {error}
        </p>
      )}
    </section>
  );
}

/** Fund mints test USDC and airdrops SOL to the wallet; only shown on a local chain. */
function Fund({ id, onFunded }: { id: string; onFunded: (b: Balance) => void }) {
  const [amounts, setAmounts] = useState({ usdc: '10', sol: '1' });
  // The API's caps for one call: 1,000,000 USDC and 100 SOL.
  const issue = (s: string, max: number, unit: string) =>
    s.trim() === '' ? '' : amountProblem(s) || (Number(s) > max ? `At most ${max.toLocaleString('en-US')} ${unit} at a time.` : '');
  const problems = { usdc: issue(amounts.usdc, 1_000_000, 'USDC'), sol: issue(amounts.sol, 100, 'SOL') };
  const nothing = !(Number(amounts.usdc) > 0) && !(Number(amounts.sol) > 0);

  const funding = useMutation({
    mutationFn: () => {
      const body: { usdc?: number; sol?: number } = {};
      if (Number(amounts.usdc) > 0) body.usdc = Number(amounts.usdc);
      if (Number(amounts.sol) > 0) body.sol = Number(amounts.sol);
      return fundWallet(id, body);
    },
    onSuccess: onFunded,
  });
  const busy = funding.isPending;
  const error = funding.error ? errorText(funding.error) : '';
  const done: Balance | null = funding.data ?? null;
  const fund = () => funding.mutate();

  return (
    <form
      className="mt-4 border-t border-line pt-3"
      aria-label="Fund on localnet"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void fund();
      }}
    >
      <h3 className="mt-0">Fund on localnet</h3>
      <p className="hint">Test tokens on this local chain: minted USDC and airdropped SOL, worth nothing.</p>
      <div className="my-2 grid grid-cols-[repeat(auto-fit,minmax(7rem,10rem))] gap-3">
        {(['usdc', 'sol'] as const).map((k) => (
          <div className="field" key={k}>
            <label htmlFor={`fund-${k}`}>{k.toUpperCase()}</label>
            <input
              id={`fund-${k}`}
              inputMode="decimal"
              autoComplete="off"
              value={amounts[k]}
              aria-invalid={problems[k] !== ''}
              aria-describedby={`fund-${k}-note`}
              onChange={(e) => setAmounts({ ...amounts, [k]: e.target.value })}
            />
            <span id={`fund-${k}-note`} className="field-error">
              {problems[k]}
            </span>
          </div>
        ))}
      </div>
      <button type="submit" className="btn" disabled={busy || nothing || problems.usdc !== '' || problems.sol !== ''}>
        {busy ? 'Funding…' : 'Fund'}
      </button>
      {done && (
        <p role="status" className="ok mt-2 mb-0">
          Funded: the wallet now holds {usdc(done.usdc)} and {sols(done.sol)}.
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

const isPolicy = (v: unknown): v is Policy => typeof v === 'object' && v !== null && Array.isArray((v as Policy).allowlist);

/** HistoryEntry says who changed what: a policy's changes old → new, or a freeze or unfreeze. */
function HistoryEntry({ e }: { e: AuditEntry }) {
  const d = (e.details ?? {}) as { before?: unknown; after?: unknown };
  const changes = e.action === 'policy.updated' && isPolicy(d.before) && isPolicy(d.after) ? changesOf(d.before, d.after) : null;
  const what =
    e.action === 'wallet.frozen'
      ? 'froze the wallet'
      : e.action === 'wallet.unfrozen'
        ? 'unfroze the wallet'
        : changes?.length
          ? 'changed the policy:'
          : 'saved the policy';
  return (
    <li data-action={e.action} data-actor={e.actor} className="border-b border-line pb-2 last:border-0">
      <p className="m-0">
        <strong title={e.actor}>{actor(e.actor)}</strong> {what} <Time iso={e.at} className="block text-sm text-muted" />
      </p>
      {changes && changes.length > 0 && <Diff changes={changes} />}
    </li>
  );
}

/** WalletPage is one wallet: its address, balance, state, policy and what happened to it. */
export function WalletPage({ id, session }: { id: string; session: Session }) {
  const owner = session.role === 'owner';
  // The wallet's balance is read from the chain on each load, and its
  // lists cost reads too: both less often than the inbox.
  const key = keys.wallet(id);
  const { data: agent = null, error: agentFailure } = useQuery({ queryKey: key, queryFn: () => getAgent(id), ...poll(5000, false) });
  const error = agentFailure ? errorText(agentFailure) : '';
  const { data: activity = null, error: activityFailure } = useQuery({
    queryKey: keys.walletActivity(id),
    queryFn: async () => {
      const [txs, approvals] = await Promise.all([walletTransactions(id), walletApprovals(id)]);
      return { txs, approvals };
    },
    ...poll(10000),
  });
  const activityError = activityFailure ? errorText(activityFailure) : '';
  // The history is read again whenever the policy or the state is seen to
  // change (its key holds them); the last one shows meanwhile.
  const changeKey = agent ? JSON.stringify([agent.policy, agent.state]) : '';
  const { data: history = null, error: historyFailure } = useQuery({
    queryKey: keys.walletHistory(id, changeKey),
    queryFn: () => walletHistory(id),
    enabled: changeKey !== '',
    placeholderData: keepPreviousData,
  });
  const historyError = historyFailure ? errorText(historyFailure) : '';
  // The owners and approvers bound how many approvals a wallet may need;
  // until they are read, the API's answer says it.
  const { data: users } = useQuery({ ...usersQuery, enabled: owner });
  const people = users?.filter((u) => u.role !== 'viewer').length;

  // An action's answer is the wallet as it is now: reads started before it
  // are cancelled so they do not put the old one back.
  const set = async (a: Agent) => {
    await queryClient.cancelQueries({ queryKey: key, exact: true });
    queryClient.setQueryData(key, a);
    void invalidate(keys.wallets, keys.balance(a.id));
  };
  // Answers of freeze, unfreeze and the policy carry no balance: keep the one shown.
  const adopt = (a: Agent) => set({ ...a, balance: a.balance ?? agent?.balance });

  if (!agent) {
    return (
      <main className="page">
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <>
            <h1 className="sr-only">Wallet</h1>
            <div className="skeleton mb-4 h-9 w-56" aria-hidden="true" />
            <SkeletonRows rows={3} height="h-28" />
          </>
        )}
      </main>
    );
  }
  return (
    <main className="page">
      <p className="mb-2">
        <Link to="/wallets" className="tap">
          ← All wallets
        </Link>
      </p>
      <h1 className="flex flex-wrap items-center gap-x-3 gap-y-1 wrap-anywhere">
        {agent.label} <StateBadge state={agent.state} />
      </h1>
      {error && <p className="error">Could not refresh: {error}</p>}
      <dl className="card mb-4 grid gap-x-6 gap-y-3 sm:grid-cols-3">
        <div className="sm:col-span-3">
          <dt className="text-sm font-semibold text-muted">Address</dt>
          <dd className="flex flex-wrap items-center gap-2">
            <code data-testid="address" className="break-all">
              {agent.pubkey}
            </code>{' '}
            <CopyButton text={agent.pubkey} what="address" />
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Balance</dt>
          <dd className="text-lg font-semibold tabular-nums">
            {agent.balance ? (
              <>
                <span data-testid="balance-usdc">{usdc(agent.balance.usdc)}</span>{' '}
                <span data-testid="balance-sol" className="block text-sm font-normal text-muted">
                  {sols(agent.balance.sol)}
                </span>
              </>
            ) : (
              '—'
            )}
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Created</dt>
          <dd>
            <Time iso={agent.created_at} />
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Wallet id</dt>
          <dd>
            <code className="text-sm break-all">{agent.id}</code>
          </dd>
        </div>
      </dl>

      <Freeze agent={agent} session={session} onChanged={adopt} />

      <section className="card mt-4" aria-label="Receive funds">
        <h2>Receive funds</h2>
        <div className="flex flex-wrap items-start gap-4">
          <QR text={agent.pubkey} label={`QR code of the address ${agent.pubkey}`} />
          <div className="min-w-0 flex-[1_1_16rem]">
            <p className="mt-0">Send USDC ({session.network === 'mainnet' ? 'mainnet' : 'test tokens'}) and a little SOL for fees to:</p>
            <p className="flex flex-wrap items-center gap-2">
              <code className="break-all">{agent.pubkey}</code> <CopyButton text={agent.pubkey} what="address to receive" />
            </p>
            {session.local_chain && owner && <Fund id={agent.id} onFunded={(b) => set({ ...agent, balance: b })} />}
          </div>
        </div>
      </section>

      <section className="card mt-4" aria-label="Policy">
        <h2>Policy</h2>
        {owner ? (
          <PolicyEditor key={agent.id} agent={agent} people={people} onSaved={adopt} />
        ) : (
          <>
            <p className="notice">Your role ({session.role}) can read the policy; owners change it.</p>
            <PolicyView policy={agent.policy} />
          </>
        )}
      </section>

      <section className="card mt-4" aria-label="Policy history">
        <h2>Policy history</h2>
        {historyError && <p className="error">Could not load the history: {historyError}</p>}
        {history === null ? (
          !historyError && <Skeleton lines={2} />
        ) : history.length === 0 ? (
          <p className="notice">No changes since the wallet was created.</p>
        ) : (
          <ol className="m-0 grid list-none gap-2 p-0">
            {history.map((e) => (
              <HistoryEntry key={e.id} e={e} />
            ))}
          </ol>
        )}
      </section>

      <section className="card mt-4" aria-label="Transactions">
        <h2>Transactions</h2>
        {activityError && <p className="error">{activityError}</p>}
        {activity === null ? (
          !activityError && <Skeleton lines={3} />
        ) : activity.txs.length === 0 ? (
          <Empty title="No transactions yet.">
            {agent.balance && agent.balance.usdc > 0
              ? 'Its agents have sent nothing yet: give one an agent key on the Keys page to start.'
              : 'Fund it first (Receive funds, above); then its agents can send.'}
          </Empty>
        ) : (
          <table className="table" aria-label="Transactions of this wallet">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col" className="num">
                  Amount
                </th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Links</th>
              </tr>
            </thead>
            <tbody>
              {activity.txs.map((t) => (
                <tr key={t.id} data-signature={t.signature} className="max-sm:[grid-template-areas:'to_amount'_'when_status'_'links_links']">
                  <td className="max-sm:text-muted max-sm:[grid-area:when]">
                    <Time iso={t.created_at} />
                  </td>
                  <td className="num max-sm:font-semibold max-sm:[grid-area:amount]">{usdc(t.amount)}</td>
                  <td className="max-sm:text-left max-sm:[grid-area:to]">
                    <span className="sm:hidden">to </span>
                    <code title={t.counterparty} className="whitespace-nowrap">
                      {short(t.counterparty)}
                    </code>
                  </td>
                  <td className="max-sm:text-right max-sm:[grid-area:status]">
                    <TxStatus status={t.status} />
                  </td>
                  <td className="max-sm:text-right max-sm:[grid-area:links]">
                    <TxLinks t={t} network={session.network} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p className="mb-0">
          <Link to="/transactions" className="tap">
            All transactions
          </Link>
        </p>
      </section>

      <section className="card mt-4" aria-label="Approvals">
        <h2>Approvals</h2>
        {activity === null ? (
          !activityError && <Skeleton lines={2} />
        ) : activity.approvals.length === 0 ? (
          <p className="notice">No approvals: sends at or above its approval threshold wait here for a decision.</p>
        ) : (
          <ul className="m-0 grid list-none p-0">
            {activity.approvals.map((a) => (
              <li
                key={a.id}
                data-approval={a.id}
                className="grid grid-cols-[minmax(0,1fr)_auto] items-center gap-x-3 border-b border-line py-1.5 last:border-0 sm:flex sm:flex-wrap sm:gap-x-2"
              >
                <Link
                  to="/approvals/$id"
                  params={{ id: a.id }}
                  className="tap justify-self-start font-medium tabular-nums max-sm:flex-wrap max-sm:gap-x-1"
                >
                  {usdc(a.amount)} <span className="whitespace-nowrap">to {short(a.to)}</span>
                </Link>
                <Status status={a.status} />
                <Time iso={a.created_at} className="text-sm text-muted" />
              </li>
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}
