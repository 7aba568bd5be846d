import { Link } from '@tanstack/react-router';
import { Skeleton } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { Time } from '../../components/Time';
import { money, short } from '../../format';
import type { WalletActivity } from '../../services/wallets';

/** WalletApprovals is the wallet's latest approvals, newest first; activity is null while unknown, error the read's failure. */
export function WalletApprovals({ activity, error }: { activity: WalletActivity | null; error: string }) {
  return (
    <section className="card mt-4" aria-label="Approvals">
      <h2>Approvals</h2>
      {activity === null ? (
        !error && <Skeleton lines={2} />
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
                {money(a.amount, a.asset)} <span className="whitespace-nowrap">to {short(a.to)}</span>
              </Link>
              <Status status={a.status} />
              <Time at={a.createdAt} className="text-sm text-muted" />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
