import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Icon } from '../../components/Icon';
import { SkeletonRows } from '../../components/Skeleton';
import { toast } from '../../components/Toast';
import { amount, errorText, money, short, usdc } from '../../format';
import { analyticsKeys } from '../../services/analytics';
import { type ApprovalRead, approvalKeys, approvalQuery, approve, reject } from '../../services/approvals';
import { invalidate, queryClient } from '../../services/queryClient';
import type { Session } from '../../services/session';
import { transactionKeys } from '../../services/transactions';
import { walletKeys } from '../../services/wallets';
import { ApprovalFacts } from './ApprovalFacts';
import { ApprovalWebhook } from './ApprovalWebhook';
import { Payment } from './Payment';
import { QuorumNotice, QuorumNow, approveQuestion, votedBy } from './Quorum';
import { Splits } from './Splits';

/** ApprovalPage is one approval: what is asked, what approving does now, the decision and the details. */
export function ApprovalPage({ id, session }: { id: string; session: Session }) {
  const read = approvalQuery(id);
  const key = read.queryKey;
  const { data, error: loadFailure } = useQuery(read);
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
      queryClient.setQueryData<ApprovalRead>(key, (d) => d && { ...d, approval });
      setConfirming(false);
      toast(
        kind === 'reject'
          ? `Rejected: ${money(approval.amount, approval.asset)} to ${short(approval.to)} is not sent.`
          : approval.status === 'rejected'
            ? `Not sent: the policy blocks it now (${approval.reason ?? 'blocked'}).`
            : `Approved: ${money(approval.amount, approval.asset)} to ${short(approval.to)} is on its way.`,
        kind === 'approve' && approval.status === 'rejected' ? 'bad' : 'ok',
      );
    },
    onError: (e) => toast(`Not decided: ${errorText(e)}`, 'bad'),
    onSettled: () => invalidate(approvalKeys.all, transactionKeys.all, walletKeys.balances, walletKeys.details, analyticsKeys.all),
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
  return (
    <main className="page max-w-3xl">
      <p className="mb-3">
        <Link to="/approvals" className="tap inline-flex items-center gap-1">
          <Icon name="back" /> All approvals
        </Link>
      </p>

      {/* What is asked, first: how much, to whom, from which wallet. */}
      <Payment a={a} ctx={ctx} />

      {pending && ctx && (
        <section className="mt-4" aria-label="What approving does now">
          <h2 className="mt-0">What approving does now</h2>
          {ctx.ifApprovedNow.outcome === 'sent' ? (
            <p className="m-0">
              {a.kind === 'send'
                ? 'The policy allows it: it would be sent, leaving '
                : 'The policy allows it: the agent could then buy it once (within 15 minutes, the policy checked again then), leaving '}
              {ctx.ifApprovedNow.remainingTodayAfterEur !== null ? (
                <>
                  <strong className="tabular-nums">{amount(ctx.ifApprovedNow.remainingTodayAfterEur)} EUR</strong> of today's EUR limit.
                </>
              ) : (
                <>
                  <strong className="tabular-nums">{usdc(ctx.ifApprovedNow.remainingTodayAfterUsdc)}</strong> of today's limit.
                </>
              )}
            </p>
          ) : (
            <p className="warn m-0 flex items-start gap-1.5">
              <Icon name="alert" className="mt-1 size-4" />
              The policy blocks it now ({ctx.ifApprovedNow.reason}): approving would reject it.
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
                  Approve and send <strong className="tabular-nums">{money(a.amount, a.asset)}</strong> from {a.agentLabel}{' '}
                  {a.splits.length > 0 ? 'split as follows:' : 'to:'}
                </>
              )}
            </p>
            {a.splits.length > 0 ? (
              <Splits a={a} />
            ) : (
              <code className="block rounded-md border border-line bg-subtle px-3 py-2 text-sm break-all">{a.to}</code>
            )}
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

      <ApprovalFacts a={a} ctx={ctx} now={now} session={session} />

      {ctx && <ApprovalWebhook webhook={ctx.webhook} />}
    </main>
  );
}
