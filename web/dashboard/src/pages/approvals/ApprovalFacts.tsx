import { Status } from '../../components/Status';
import { Time } from '../../components/Time';
import { actor, countdown, explorer, money, when } from '../../format';
import type { Approval, ApprovalContext } from '../../services/approvals';
import type { Session } from '../../services/session';
import { QuorumFacts } from './Quorum';

/**
 * ApprovalFacts are an approval's details: the wallet, what is bought (x402
 * or MPP) and, for MPP, the seller as it names itself,
 * who asked and when, who approved, when it expires or was decided, its
 * signature and why it was rejected. now is the page's clock (when the
 * approval was read).
 */
export function ApprovalFacts({ a, ctx, now, session }: { a: Approval; ctx: ApprovalContext | null; now: number; session: Session }) {
  const pending = a.status === 'pending';
  return (
    <section className="card mt-4" aria-label="Details">
      <h2 className="mt-0">Details</h2>
      <dl className="facts">
        <dt>Wallet</dt>
        <dd>
          {a.agentLabel}
          {ctx && (
            <>
              {' '}
              <code>{ctx.wallet.pubkey}</code> {ctx.wallet.state === 'frozen' && <Status status="frozen" />}
            </>
          )}
        </dd>
        <dt>Amount</dt>
        <dd className="tabular-nums">{money(a.amount, a.asset)}</dd>
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
        {a.kind === 'mpp' && (
          <>
            <dt>Buys (MPP)</dt>
            <dd>
              <code>{a.resource}</code>
            </dd>
            {/* The realm is the seller's own word, not checked: said as such. */}
            <dt>Seller says it is</dt>
            <dd>{a.realm ?? '—'}</dd>
            <dt>Seller says</dt>
            <dd>{a.description ?? '—'}</dd>
          </>
        )}
        <dt>Memo</dt>
        <dd>{a.memo ?? '—'}</dd>
        <dt>Asked by</dt>
        <dd>{ctx?.requester ? (ctx.requester.label ?? ctx.requester.prefix ?? actor(ctx.requester.id)) : actor(a.requestedBy)}</dd>
        <dt>Asked</dt>
        <dd>
          <Time at={a.createdAt} now={now} />
        </dd>
        <QuorumFacts a={a} me={session.address} />
        {pending ? (
          <>
            <dt>Expires</dt>
            <dd>
              in {countdown(a.expiresAt, now)} ({when(a.expiresAt)})
            </dd>
          </>
        ) : (
          <>
            <dt>Decided</dt>
            <dd>
              <Time at={a.decidedAt} now={now} /> {a.approvedBy && `· approved by ${actor(a.approvedBy)}`}
              {a.rejectedBy && `· rejected by ${actor(a.rejectedBy)}`}
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
              {a.reasonDetail ? ` (${a.reasonDetail})` : ''}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
