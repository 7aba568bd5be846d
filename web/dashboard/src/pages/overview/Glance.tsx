import { Link } from '@tanstack/react-router';
import { amount, usdc } from '../../format';
import type { Analytics } from '../../services/analytics';
import type { Approval } from '../../services/approvals';
import type { Transaction } from '../../services/transactions';
import type { Wallet } from '../../services/wallets';
import { Meter } from './Meter';

/**
 * Glance answers three questions in three figures: what waits for a
 * decision, how much went out today against the wallets' daily limits, and
 * what failed or was blocked today. null is not known yet.
 */
export function Glance({
  pending,
  wallets,
  spend,
  failed,
}: {
  pending: Approval[] | null;
  wallets: Wallet[] | null;
  spend: Analytics | null;
  failed: { transactions: Transaction[]; more: boolean } | null;
}) {
  const waiting = pending?.length ?? null;
  const spent = spend ? spend.spend.filter((s) => s.day === spend.to).reduce((n, s) => n + s.amount_usdc, 0) : null;
  const limit = wallets ? wallets.reduce((n, a) => n + a.policy.daily_limit_usdc, 0) : null;
  const share = spent !== null && limit ? Math.min(1, spent / limit) : 0;
  const blocks = spend ? spend.blocked.reduce((n, b) => n + b.count, 0) : null;
  const fails = failed ? failed.transactions.length : null;
  const figure = 'm-0 text-3xl font-bold tabular-nums';
  const box = 'card grid content-start gap-1';
  return (
    <section className="mt-4 grid gap-4 sm:grid-cols-3" aria-label="At a glance">
      <div className={`${box} ${waiting ? 'border-warn/60 bg-warn-soft' : ''}`}>
        <h2 className="m-0 text-sm font-semibold text-muted">Needs you now</h2>
        {waiting === null ? (
          <div className="skeleton h-9 w-16" aria-hidden="true" />
        ) : (
          <p className={`${figure} ${waiting ? 'text-warn' : ''}`}>{waiting >= 50 ? '50+' : waiting}</p>
        )}
        <p className="m-0 text-sm">
          {waiting ? (
            <>
              {waiting === 1 ? 'approval waits' : 'approvals wait'} for a decision. <Link to="/approvals">Review</Link>
            </>
          ) : (
            <span className="notice">no approval waits</span>
          )}
        </p>
      </div>
      <div className={box}>
        <h2 className="m-0 text-sm font-semibold text-muted">Spent today (UTC)</h2>
        {spent === null || limit === null ? (
          <div className="skeleton h-9 w-32" aria-hidden="true" />
        ) : (
          <>
            <p className={figure}>
              {amount(spent)} <span className="text-base font-medium text-muted">USDC</span>
            </p>
            <Meter
              share={share}
              label="All wallets: spent today against their daily limits"
              max={limit}
              value={spent}
              text={`${usdc(spent)} of ${usdc(limit)}`}
            />
            <p className="m-0 text-sm text-muted">of {usdc(limit)}, the sum of the shown wallets' daily limits</p>
          </>
        )}
      </div>
      <div className={`${box} ${fails || blocks ? 'border-bad/60 bg-bad-soft' : ''}`}>
        <h2 className="m-0 text-sm font-semibold text-muted">Failed or blocked today</h2>
        {fails === null || blocks === null ? (
          <div className="skeleton h-9 w-16" aria-hidden="true" />
        ) : (
          <>
            <p className={`${figure} ${fails || blocks ? 'text-bad' : ''}`}>
              {fails + blocks}
              {failed?.more ? '+' : ''}
            </p>
            <p className="m-0 text-sm">
              {fails || blocks ? (
                <>
                  <Link to="/transactions" search={{ status: 'failed' }} className="tap">
                    {fails}
                    {failed?.more ? '+' : ''} failed
                  </Link>
                  {' · '}
                  <Link to="/audit" search={{ action: 'send.blocked' }} className="tap">
                    {blocks} blocked by a policy
                  </Link>
                </>
              ) : (
                <span className="notice">nothing failed, nothing blocked</span>
              )}
            </p>
          </>
        )}
      </div>
    </section>
  );
}
