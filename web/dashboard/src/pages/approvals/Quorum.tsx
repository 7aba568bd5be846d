// m-of-n approvals on the approval page and in the inbox: how many of the
// people needed approved, who, and whether the signed-in person already
// did (then they see it but cannot approve again). Presentational: the
// pages pass the approval and the person's address.
import { actor } from '../../format';
import type { Approval } from '../../services/approvals';

/** approvesCount is "1 of 2 approvals", or "" when one approve suffices and none was given. */
export function approvesCount(a: Pick<Approval, 'approvals' | 'approvalsNeeded'>): string {
  if (a.approvalsNeeded <= 1 && a.approvals.length === 0) return '';
  return `${a.approvals.length} of ${a.approvalsNeeded} approval${a.approvalsNeeded === 1 ? '' : 's'}`;
}

/** votedBy reports whether the person at address approved a (in the dashboard, with a key they made, or from Slack). */
export function votedBy(a: Pick<Approval, 'approvals'>, address: string): boolean {
  const me = `user:${address}`;
  return a.approvals.some((v) => v.by === me || v.person === me);
}

/** approvesLeft is how many more people must approve a pending approval. */
export const approvesLeft = (a: Pick<Approval, 'approvals' | 'approvalsNeeded'>) => Math.max(0, a.approvalsNeeded - a.approvals.length);

/** QuorumBadge is the inbox's "1 of 2 approvals" beside a pending approval. */
export function QuorumBadge({ a }: { a: Approval }) {
  const count = approvesCount(a);
  if (!count || a.status !== 'pending') return null;
  return (
    <span className="quorum" data-testid="quorum">
      {' '}
      · {count}
    </span>
  );
}

/** QuorumFacts are the approval page's "Approvals" row: the count and who approved, the signed-in person marked. */
export function QuorumFacts({ a, me }: { a: Approval; me: string }) {
  const count = approvesCount(a);
  if (!count) return null;
  return (
    <>
      <dt>Approvals</dt>
      <dd>
        <span data-testid="quorum">{count}</span>
        {a.approvals.length > 0 && (
          <ul className="facts" aria-label="Approved by">
            {a.approvals.map((v) => (
              <li key={v.by + v.at}>
                {actor(v.by)}
                {v.person && v.person !== v.by ? ` (${actor(v.person)})` : ''}
                {v.person === `user:${me}` || v.by === `user:${me}` ? ' · you' : ''}
                {v.note ? ` · “${v.note}”` : ''}
              </li>
            ))}
          </ul>
        )}
      </dd>
    </>
  );
}

/** QuorumNotice tells a person who already approved a pending approval that it waits for others. */
export function QuorumNotice({ a }: { a: Approval }) {
  const left = approvesLeft(a);
  return (
    <p className="notice" data-testid="voted">
      You approved this payment. It waits for {left} more {left === 1 ? 'person' : 'people'} to approve it; you may still reject it.
    </p>
  );
}

/** approveQuestion is the confirmation's question: sending now, or one approve of several. */
export function approveQuestion(a: Approval): string {
  const left = approvesLeft(a);
  return left > 1 ? `Approve? It then has ${a.approvals.length + 1} of ${a.approvalsNeeded} approvals and is sent after the last one.` : '';
}

/** QuorumNow adds to "What approving does now" that an approve short of the quorum only counts. */
export function QuorumNow({ a, voted }: { a: Approval; voted: boolean }) {
  const left = approvesLeft(a);
  if (voted || left <= 1) return null;
  return (
    <p data-testid="quorum-now">
      Your approve would be {a.approvals.length + 1} of {a.approvalsNeeded}: the payment waits for {left - 1} more{' '}
      {left - 1 === 1 ? 'person' : 'people'}, and the policy is checked again at the last approve.
    </p>
  );
}
