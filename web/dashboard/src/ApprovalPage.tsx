import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type Approval, type Session, approve, getApproval, getContext, reject } from './api';
import { actor, countdown, errorText, usdc, when, explorer } from './format';
import { invalidate, keys, poll, queryClient } from './queries';
import { QuorumFacts, QuorumNotice, QuorumNow, approveQuestion, votedBy } from './Quorum';

type Loaded = { approval: Approval; context: Awaited<ReturnType<typeof getContext>>; at: number };

export function ApprovalPage({ id, session }: { id: string; session: Session }) {
  const key = keys.approval(id);
  const { data, error: loadFailure } = useQuery({
    queryKey: key,
    queryFn: async (): Promise<Loaded> => {
      const [approval, context] = await Promise.all([getApproval(id), getContext(id)]);
      return { approval, context, at: Date.now() };
    },
    ...poll(),
  });
  const loadError = loadFailure ? errorText(loadFailure) : '';
  const a = data?.approval ?? null;
  const ctx = data?.context ?? null;
  const now = data?.at ?? Date.now();
  const [note, setNote] = useState('');
  const [confirming, setConfirming] = useState(false);
  const canDecide = session.role === 'owner' || session.role === 'approver';

  // A decision moves money: the page shows the API's answer, never a guess.
  // Reads started before it are cancelled, so none of them (the approval
  // still pending) lands after it.
  const decide = useMutation({
    mutationFn: (kind: 'approve' | 'reject') => (kind === 'approve' ? approve(id, note) : reject(id, note)),
    onSuccess: async (approval) => {
      await queryClient.cancelQueries({ queryKey: key });
      queryClient.setQueryData<Loaded>(key, (d) => d && { ...d, approval });
      setConfirming(false);
    },
    onSettled: () => invalidate(keys.approvals, keys.transactions, keys.balances, ['wallet'], ['analytics']),
  });
  const busy = decide.isPending;
  const error = (decide.error ? errorText(decide.error) : '') || loadError;
  const act = (kind: 'approve' | 'reject') => decide.mutate(kind);

  if (!a) {
    return <main>{error ? <p className="error">{error}</p> : <p>Loading…</p>}</main>;
  }
  const pending = a.status === 'pending';
  const voted = votedBy(a, session.address);
  return (
    <main className="detail">
      <p>
        <Link to="/">← All approvals</Link>
      </p>
      <h1>
        {usdc(a.amount)} to {a.to.slice(0, 6)}…
      </h1>
      <p>
        <span className={`badge ${a.status}`} data-testid="status">
          {a.status}
        </span>
        {a.transaction_status && <span className="tx"> · transaction {a.transaction_status}</span>}
      </p>
      <dl>
        <dt>Wallet</dt>
        <dd>
          {a.agent_label}
          {ctx && (
            <>
              {' '}
              <code>{ctx.wallet.pubkey}</code> {ctx.wallet.state === 'frozen' && <span className="badge rejected">frozen</span>}
            </>
          )}
        </dd>
        <dt>Amount</dt>
        <dd>{usdc(a.amount)}</dd>
        <dt>Recipient</dt>
        <dd>
          <code>{a.to}</code>
          {ctx && pending && (
            <ul className="facts">
              {ctx.recipient.first_payment && <li className="warn">First payment to this address</li>}
              <li>
                {ctx.recipient.allowlist_empty
                  ? 'The wallet has no allowlist (any recipient)'
                  : ctx.recipient.on_allowlist
                    ? ctx.recipient.label
                      ? `On the allowlist as “${ctx.recipient.label}”`
                      : 'On the allowlist'
                    : 'Not on the allowlist'}
              </li>
            </ul>
          )}
        </dd>
        {a.kind === 'x402' && (
          <>
            <dt>Buys (x402)</dt>
            <dd>
              <code>{a.resource}</code>
            </dd>
            <dt>Seller says</dt>
            <dd>{a.description ?? '—'}</dd>
          </>
        )}
        <dt>Memo</dt>
        <dd>{a.memo ?? '—'}</dd>
        <dt>Asked by</dt>
        <dd>{ctx?.requester ? (ctx.requester.label ?? ctx.requester.prefix ?? actor(ctx.requester.id)) : actor(a.requested_by)}</dd>
        <dt>Asked</dt>
        <dd>{when(a.created_at)}</dd>
        <QuorumFacts a={a} me={session.address} />
        {pending ? (
          <>
            <dt>Expires</dt>
            <dd>
              in {countdown(a.expires_at, now)} ({when(a.expires_at)})
            </dd>
          </>
        ) : (
          <>
            <dt>Decided</dt>
            <dd>
              {when(a.decided_at)} {a.approved_by && `· approved by ${actor(a.approved_by)}`}
              {a.rejected_by && `· rejected by ${actor(a.rejected_by)}`}
            </dd>
            {a.note && (
              <>
                <dt>Note</dt>
                <dd>{a.note}</dd>
              </>
            )}
          </>
        )}
        {a.signature && (
          <>
            <dt>Signature</dt>
            <dd>
              <code data-testid="signature">{a.signature}</code>{' '}
              <a href={explorer(a.signature, session.network)} target="_blank" rel="noreferrer">
                View on the explorer
              </a>
            </dd>
          </>
        )}
        {a.reason && (
          <>
            <dt>Rejected because</dt>
            <dd data-testid="reason">
              {a.reason}
              {a.reason_detail ? ` (${a.reason_detail})` : ''}
            </dd>
          </>
        )}
      </dl>

      {pending && ctx && (
        <section className="now" aria-label="What approving does now">
          <h2>What approving does now</h2>
          {ctx.if_approved_now.outcome === 'sent' ? (
            <p>
              {a.kind === 'x402'
                ? 'The policy allows it: the agent could then buy it once (within 15 minutes, the policy checked again then), leaving '
                : 'The policy allows it: it would be sent, leaving '}
              {usdc(ctx.if_approved_now.remaining_today_after_usdc)} of today's limit.
            </p>
          ) : (
            <p className="warn">The policy blocks it now ({ctx.if_approved_now.reason}): approving would reject it.</p>
          )}
          <QuorumNow a={a} voted={voted} />
        </section>
      )}

      {pending && canDecide && voted && <QuorumNotice a={a} />}
      {pending && canDecide && (
        <section className="decide" aria-label="Decide">
          <label htmlFor="note">Note (optional)</label>
          <textarea id="note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} />
          {confirming ? (
            <div className="confirm" role="alertdialog" aria-label="Confirm approval">
              <p>
                {approveQuestion(a) || (
                  <>
                    Approve and send {usdc(a.amount)} to <code>{a.to}</code> now?
                  </>
                )}
              </p>
              <button type="button" className="primary" onClick={() => act('approve')} disabled={busy}>
                Confirm approval
              </button>
              <button type="button" onClick={() => setConfirming(false)} disabled={busy}>
                Cancel
              </button>
            </div>
          ) : (
            <div className="buttons">
              <button type="button" className="primary" onClick={() => setConfirming(true)} disabled={busy || voted}>
                {voted ? 'Approved by you' : 'Approve…'}
              </button>
              <button type="button" className="danger" onClick={() => act('reject')} disabled={busy}>
                Reject
              </button>
            </div>
          )}
        </section>
      )}
      {pending && !canDecide && <p className="notice">Your role ({session.role}) can read approvals but not decide them.</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}

      {ctx && (
        <section aria-label="Webhook">
          <h2>Originating webhook</h2>
          {ctx.webhook.deliveries.length > 0 ? (
            <ul className="facts">
              {ctx.webhook.deliveries.map((d) => (
                <li key={d.endpoint_id}>
                  {d.format} endpoint {new URL(d.url).host}: {d.status} ({d.attempts} attempt{d.attempts === 1 ? '' : 's'})
                </li>
              ))}
            </ul>
          ) : (
            <p>No endpoint was subscribed to approval.pending.</p>
          )}
          {ctx.webhook.event !== null && <pre data-testid="payload">{JSON.stringify(ctx.webhook.event, null, 2)}</pre>}
        </section>
      )}
    </main>
  );
}
