import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { Agent, AuditEntry, Balance, Session } from './api';
import { type Policy, freezeAgent, fundWallet, getAgent, unfreezeAgent, walletApprovals, walletHistory, walletTransactions } from './api-wallets';
import { actor, errorText, short, usdc, when } from './format';
import { Diff, PolicyEditor, PolicyView } from './PolicyEditor';
import { TxLinks, TxStatus } from './TransactionsPage';
import { amountProblem, changesOf } from './policy-draft';
import { invalidate, keys, poll, queryClient } from './queries';
import { QR } from './qr';
import './wallets.css';

/** StateBadge is a wallet's state, wherever the wallet appears. */
export function StateBadge({ state }: { state: Agent['state'] }) {
  return (
    <span className={`badge ${state === 'frozen' ? 'rejected' : 'sent'}`} data-testid="state">
      {state}
    </span>
  );
}

/** CopyButton copies text and says whether it could (the clipboard needs a secure page and leave). */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const shown = { idle: 'Copy', copied: 'Copied', failed: 'Copy failed: select the text' }[state];
  return (
    <button
      type="button"
      className="small"
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
    },
  });
  const busy = change.isPending;
  const error = change.error ? errorText(change.error) : '';
  const act = () => change.mutate();

  return (
    <section className="card" aria-label="Freeze">
      <h2>{frozen ? 'Frozen' : 'Active'}</h2>
      <p>{frozen ? 'Every send is blocked (wallet_frozen) until an owner unfreezes the wallet.' : 'Sends are decided by the policy below.'}</p>
      {may &&
        (confirming ? (
          <div className="confirm" role="alertdialog" aria-label={frozen ? 'Confirm unfreeze' : 'Confirm freeze'}>
            <p>
              {frozen
                ? `Unfreeze ${agent.label}? Its agents can send again, within the policy.`
                : `Freeze ${agent.label}? Every send is blocked until an owner unfreezes it.`}
            </p>
            {/* Focus moves to the confirmation, so the keyboard goes on from where it was. */}
            <button type="button" className={frozen ? 'primary' : 'danger'} onClick={act} disabled={busy} autoFocus>
              {frozen ? 'Confirm unfreeze' : 'Confirm freeze'}
            </button>
            <button type="button" onClick={() => setConfirming(false)} disabled={busy}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" className={frozen ? 'primary' : 'danger'} onClick={() => setConfirming(true)}>
            {frozen ? 'Unfreeze…' : 'Freeze…'}
          </button>
        ))}
      {!may && frozen && session.role === 'approver' && <p className="notice">Only an owner can unfreeze it.</p>}
      {error && (
        <p role="alert" className="error">
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
      className="fund"
      aria-label="Fund on localnet"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void fund();
      }}
    >
      <h3>Fund on localnet</h3>
      <p className="hint">Test tokens on this local chain: minted USDC and airdropped SOL, worth nothing.</p>
      <div className="amounts">
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
      <button type="submit" disabled={busy || nothing || problems.usdc !== '' || problems.sol !== ''}>
        {busy ? 'Funding…' : 'Fund'}
      </button>
      {done && (
        <p role="status" className="ok">
          Funded: the wallet now holds {usdc(done.usdc)} and {done.sol} SOL.
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
    <li data-action={e.action} data-actor={e.actor}>
      <p>
        <strong title={e.actor}>{actor(e.actor)}</strong> {what} <time dateTime={e.at}>{when(e.at)}</time>
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
    return <main>{error ? <p className="error">{error}</p> : <p>Loading…</p>}</main>;
  }
  return (
    <main className="wide wallet-page">
      <p>
        <Link to="/wallets">← All wallets</Link>
      </p>
      <h1>
        {agent.label} <StateBadge state={agent.state} />
      </h1>
      {error && <p className="error">Could not refresh: {error}</p>}
      <dl className="facts-list">
        <div>
          <dt>Address</dt>
          <dd className="address-line">
            <code data-testid="address">{agent.pubkey}</code> <CopyButton text={agent.pubkey} what="address" />
          </dd>
        </div>
        <div>
          <dt>Balance</dt>
          <dd>
            {agent.balance ? (
              <>
                <span data-testid="balance-usdc">{usdc(agent.balance.usdc)}</span> · <span data-testid="balance-sol">{agent.balance.sol} SOL</span>
              </>
            ) : (
              '—'
            )}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{when(agent.created_at)}</dd>
        </div>
        <div>
          <dt>Wallet id</dt>
          <dd>
            <code>{agent.id}</code>
          </dd>
        </div>
      </dl>

      <Freeze agent={agent} session={session} onChanged={adopt} />

      <section className="card receive" aria-label="Receive funds">
        <h2>Receive funds</h2>
        <div className="receive-body">
          <QR text={agent.pubkey} label={`QR code of the address ${agent.pubkey}`} />
          <div>
            <p>Send USDC ({session.network === 'mainnet' ? 'mainnet' : 'test tokens'}) and a little SOL for fees to:</p>
            <p className="address-line">
              <code>{agent.pubkey}</code> <CopyButton text={agent.pubkey} what="address to receive" />
            </p>
            {session.local_chain && owner && <Fund id={agent.id} onFunded={(b) => set({ ...agent, balance: b })} />}
          </div>
        </div>
      </section>

      <section className="card" aria-label="Policy">
        <h2>Policy</h2>
        {owner ? (
          <PolicyEditor key={agent.id} agent={agent} onSaved={adopt} />
        ) : (
          <>
            <p className="notice">Your role ({session.role}) can read the policy; owners change it.</p>
            <PolicyView policy={agent.policy} />
          </>
        )}
      </section>

      <section className="card" aria-label="Policy history">
        <h2>Policy history</h2>
        {historyError && <p className="error">Could not load the history: {historyError}</p>}
        {history === null ? (
          !historyError && <p>Loading…</p>
        ) : history.length === 0 ? (
          <p className="notice">No changes since the wallet was created.</p>
        ) : (
          <ol className="history">
            {history.map((e) => (
              <HistoryEntry key={e.id} e={e} />
            ))}
          </ol>
        )}
      </section>

      <section className="card" aria-label="Transactions">
        <h2>Transactions</h2>
        {activityError && <p className="error">{activityError}</p>}
        {activity === null ? (
          !activityError && <p>Loading…</p>
        ) : activity.txs.length === 0 ? (
          <p className="notice">No transactions yet.</p>
        ) : (
          <table className="audit" aria-label="Transactions of this wallet">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Amount</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Links</th>
              </tr>
            </thead>
            <tbody>
              {activity.txs.map((t) => (
                <tr key={t.id} data-signature={t.signature}>
                  <td>{when(t.created_at)}</td>
                  <td>{usdc(t.amount)}</td>
                  <td>
                    <code title={t.counterparty}>{short(t.counterparty)}</code>
                  </td>
                  <td>
                    <TxStatus status={t.status} />
                  </td>
                  <td>
                    <TxLinks t={t} network={session.network} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p>
          <Link to="/transactions">All transactions</Link>
        </p>
      </section>

      <section className="card" aria-label="Approvals">
        <h2>Approvals</h2>
        {activity === null ? (
          !activityError && <p>Loading…</p>
        ) : activity.approvals.length === 0 ? (
          <p className="notice">No approvals.</p>
        ) : (
          <ul className="approval-rows">
            {activity.approvals.map((a) => (
              <li key={a.id} data-approval={a.id}>
                <Link to="/approvals/$id" params={{ id: a.id }}>
                  {usdc(a.amount)} to {short(a.to)}
                </Link>{' '}
                <span className={`badge ${a.status}`}>{a.status}</span> <span className="notice">{when(a.created_at)}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}
