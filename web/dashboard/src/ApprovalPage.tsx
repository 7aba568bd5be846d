import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type Approval, type Session, approve, getApproval, getContext, reject } from './api';
import { actor, countdown, errorText, short, usdc, when, explorer } from './format';
import { ConfirmDialog } from './components/ConfirmDialog';
import { Icon } from './components/Icon';
import { SkeletonRows } from './components/Skeleton';
import { Status } from './components/Status';
import { Time } from './components/Time';
import { toast } from './components/Toast';
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
    onSuccess: async (approval, kind) => {
      await queryClient.cancelQueries({ queryKey: key });
      queryClient.setQueryData<Loaded>(key, (d) => d && { ...d, approval });
      setConfirming(false);
      toast(
        kind === 'reject'
          ? `Rejected: ${usdc(approval.amount)} to ${short(approval.to)} is not sent.`
          : approval.status === 'rejected'
            ? `Not sent: the policy blocks it now (${approval.reason ?? 'blocked'}).`
            : `Approved: ${usdc(approval.amount)} to ${short(approval.to)} is on its way.`,
        kind === 'approve' && approval.status === 'rejected' ? 'bad' : 'ok',
      );
    },
    onError: (e) => toast(`Not decided: ${errorText(e)}`, 'bad'),
    onSettled: () => invalidate(keys.approvals, keys.transactions, keys.balances, ['wallet'], ['analytics']),
  });
  const busy = decide.isPending;
  const error = (decide.error ? errorText(decide.error) : '') || loadError;
  const act = (kind: 'approve' | 'reject') => decide.mutate(kind);

  if (!a) {
    return (
      <main className="page max-w-3xl">
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <>
            <h1 className="sr-only">Approval</h1>
            <div className="card grid gap-3" aria-busy="true">
              <span className="sr-only">Loading</span>
              <div className="skeleton h-4 w-40" />
              <div className="skeleton h-10 w-64" />
              <div className="skeleton h-5 w-full" />
            </div>
            <div className="mt-4">
              <SkeletonRows rows={2} height="h-24" />
            </div>
          </>
        )}
      </main>
    );
  }
  const pending = a.status === 'pending';
  const voted = votedBy(a, session.address);
  const allowlist = ctx
    ? ctx.recipient.allowlist_empty
      ? 'The wallet has no allowlist (any recipient)'
      : ctx.recipient.on_allowlist
        ? ctx.recipient.label
          ? `On the allowlist as “${ctx.recipient.label}”`
          : 'On the allowlist'
        : 'Not on the allowlist'
    : '';
  return (
    <main className="page max-w-3xl">
      <p className="mb-3">
        <Link to="/approvals" className="tap inline-flex items-center gap-1">
          <Icon name="back" /> All approvals
        </Link>
      </p>

      {/* What is asked, first: how much, to whom, from which wallet. */}
      <section className="card p-5" aria-label="Payment">
        <p className="m-0 flex flex-wrap items-center gap-2 text-sm text-muted">
          <Status status={a.status} testId="status" />
          {a.transaction_status && <span className="tx">transaction {a.transaction_status}</span>}
          <span>
            {a.kind === 'x402' ? 'A purchase' : 'A payment'} asked by <strong className="text-ink">{a.agent_label}</strong>
          </span>
        </p>
        <h1 className="mt-3 mb-1 grid gap-1">
          <span className="text-3xl font-bold tabular-nums">{usdc(a.amount)}</span>
          <span className="text-lg font-medium text-muted">
            to <code className="text-ink">{short(a.to)}</code>
          </span>
        </h1>
        <div className="mt-4 grid gap-1">
          <span className="text-sm font-semibold text-muted">Recipient</span>
          <code className="block rounded-md border border-line bg-subtle px-3 py-2 text-sm break-all">{a.to}</code>
          {ctx && pending && (
            <ul className="m-0 mt-1 grid list-none gap-1 p-0 text-sm">
              {ctx.recipient.first_payment && (
                <li className="warn flex items-center gap-1.5">
                  <Icon name="alert" />
                  First payment to this address
                </li>
              )}
              <li className={`flex items-center gap-1.5 ${ctx.recipient.on_allowlist ? 'text-ok' : 'text-muted'}`}>
                <Icon name={ctx.recipient.on_allowlist ? 'check' : 'dot'} />
                {allowlist}
              </li>
            </ul>
          )}
        </div>
        {a.memo && (
          <p className="mt-4 mb-0 rounded-md bg-subtle px-3 py-2">
            <span className="text-sm font-semibold text-muted">Memo </span>“{a.memo}”
          </p>
        )}
      </section>

      {pending && ctx && (
        <section className="mt-4" aria-label="What approving does now">
          <h2 className="mt-0">What approving does now</h2>
          {ctx.if_approved_now.outcome === 'sent' ? (
            <p className="m-0">
              {a.kind === 'x402'
                ? 'The policy allows it: the agent could then buy it once (within 15 minutes, the policy checked again then), leaving '
                : 'The policy allows it: it would be sent, leaving '}
              <strong className="tabular-nums">{usdc(ctx.if_approved_now.remaining_today_after_usdc)}</strong> of today's limit.
            </p>
          ) : (
            <p className="warn m-0 flex items-start gap-1.5">
              <Icon name="alert" className="mt-1 size-4" />
              The policy blocks it now ({ctx.if_approved_now.reason}): approving would reject it.
            </p>
          )}
          <QuorumNow a={a} voted={voted} />
        </section>
      )}

      {pending && canDecide && voted && <QuorumNotice a={a} />}
      {pending && canDecide && (
        <section className="card mt-4" aria-label="Decide">
          <h2 className="mt-0">Decide</h2>
          <label htmlFor="note">Note (optional)</label>
          <textarea id="note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} className="mt-1 mb-3 block min-h-20 w-full" />
          <div className="grid gap-2 sm:grid-cols-2">
            <button type="button" className="btn btn-primary" onClick={() => setConfirming(true)} disabled={busy || voted}>
              <Icon name="check" />
              {voted ? 'Approved by you' : 'Approve…'}
            </button>
            <button type="button" className="btn btn-danger" onClick={() => act('reject')} disabled={busy}>
              <Icon name="cross" />
              Reject
            </button>
          </div>
          <p className="hint mt-2">Approve asks you to confirm before anything is sent. Reject sends nothing.</p>
          <ConfirmDialog
            open={confirming}
            title="Confirm approval"
            confirm="Confirm approval"
            busy={busy}
            error={decide.error ? errorText(decide.error) : ''}
            onConfirm={() => act('approve')}
            onClose={() => setConfirming(false)}
          >
            <p className="m-0">
              {approveQuestion(a) || (
                <>
                  Approve and send <strong className="tabular-nums">{usdc(a.amount)}</strong> from {a.agent_label} to:
                </>
              )}
            </p>
            <code className="block rounded-md border border-line bg-subtle px-3 py-2 text-sm break-all">{a.to}</code>
            {session.network === 'mainnet' && <p className="warn m-0">This is mainnet: real money moves now.</p>}
          </ConfirmDialog>
        </section>
      )}
      {pending && !canDecide && <p className="notice mt-4">Your role ({session.role}) can read approvals but not decide them.</p>}
      {error && !confirming && (
        <p role="alert" className="error mt-4">
          {error}
        </p>
      )}

      <section className="card mt-4" aria-label="Details">
        <h2 className="mt-0">Details</h2>
        <dl className="facts">
          <dt>Wallet</dt>
          <dd>
            {a.agent_label}
            {ctx && (
              <>
                {' '}
                <code>{ctx.wallet.pubkey}</code> {ctx.wallet.state === 'frozen' && <Status status="frozen" />}
              </>
            )}
          </dd>
          <dt>Amount</dt>
          <dd className="tabular-nums">{usdc(a.amount)}</dd>
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
          <dd>
            <Time iso={a.created_at} now={now} />
          </dd>
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
                <Time iso={a.decided_at} now={now} /> {a.approved_by && `· approved by ${actor(a.approved_by)}`}
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
      </section>

      {ctx && (
        <section className="mt-4" aria-label="Webhook">
          <h2>Originating webhook</h2>
          {ctx.webhook.deliveries.length > 0 ? (
            <ul className="m-0 grid gap-1 pl-5">
              {ctx.webhook.deliveries.map((d) => (
                <li key={d.endpoint_id}>
                  {d.format} endpoint {new URL(d.url).host}: <Status status={d.status} /> ({d.attempts} attempt{d.attempts === 1 ? '' : 's'})
                </li>
              ))}
            </ul>
          ) : (
            <p className="notice">No endpoint was subscribed to approval.pending.</p>
          )}
          {ctx.webhook.event !== null && (
            <pre data-testid="payload" className="mt-2 max-h-96 wrap-anywhere whitespace-pre-wrap" tabIndex={0}>
              {JSON.stringify(ctx.webhook.event, null, 2)}
            </pre>
          )}
        </section>
      )}
    </main>
  );
}
