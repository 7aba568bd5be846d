import { Link } from '@tanstack/react-router';
import { Address } from '../../components/Address';
import { Icon } from '../../components/Icon';
import { Skeleton } from '../../components/Skeleton';
import { money } from '../../format';
import type { Approval } from '../../services/approvals';

const APPROVALS_SHOWN = 5;

/** Pending is the approvals waiting for a person, newest first (the frame polls them); null while unknown. */
export function Pending({ pending }: { pending: Approval[] | null }) {
  // The list is one page of 50: at 50 there may be more.
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
                {money(a.amount, a.asset)}
              </Link>{' '}
              from {a.agentLabel} to <Address value={a.to} />
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
