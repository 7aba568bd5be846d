import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { Icon } from '../../components/Icon';
import { Skeleton } from '../../components/Skeleton';
import { short, sols } from '../../format';
import type { Wallet } from '../../services/wallets';
import type { BalanceRead } from './useOverview';
import { LOW_SOL } from './WalletCard';

/**
 * LowSol lists the wallets whose SOL may not pay their next fees (below
 * LOW_SOL), says so when none is, and which balances could not be read.
 * wallets is null while unknown; failed says the wallets could not be
 * read. children follow the list (the owners' offer of sponsorship).
 */
export function LowSol({
  wallets,
  failed,
  balances,
  children,
}: {
  wallets: Wallet[] | null;
  failed: boolean;
  balances: Map<string, BalanceRead>;
  children?: ReactNode;
}) {
  const low = (wallets ?? []).filter((a) => {
    const b = balances.get(a.id)?.balance;
    return b != null && b.sol < LOW_SOL;
  });
  const unread = (wallets ?? []).filter((a) => {
    const r = balances.get(a.id);
    return r != null && r.balance === null && r.error !== '';
  });
  const checking = wallets !== null && wallets.some((a) => !balances.has(a.id));
  return (
    <section className={`card ${low.length > 0 ? 'border-2 border-bad bg-bad-soft' : ''}`} aria-labelledby="ov-low" data-section="low-sol">
      <h2 id="ov-low" className={`mt-0 ${low.length > 0 ? 'text-bad' : ''}`}>
        {low.length > 0 ? `⚠ Low on SOL for fees (${low.length})` : 'Low on SOL for fees'}
      </h2>
      {wallets === null ? (
        failed ? (
          <p className="notice">Unknown: the wallets could not be loaded.</p>
        ) : (
          <Skeleton lines={2} />
        )
      ) : wallets.length === 0 ? (
        <p className="notice">None: no wallets yet.</p>
      ) : low.length === 0 ? (
        <p className="notice flex items-center gap-1.5">
          {!checking && unread.length === 0 && <Icon name="check" className="size-4 text-ok" />}
          {checking
            ? 'Checking balances…'
            : unread.length === wallets.length
              ? 'Unknown: no balance could be read.'
              : unread.length > 0
                ? `None among the wallets read: each has at least ${sols(LOW_SOL)}.`
                : `None: every wallet has at least ${sols(LOW_SOL)}.`}
        </p>
      ) : (
        <>
          <p>Sends from these may fail: fees and new recipients' token accounts are paid in SOL. Send each at least {sols(LOW_SOL)}.</p>
          <ul className="m-0 grid list-none gap-1 p-0">
            {low.map((a) => (
              <li key={a.id} data-wallet={a.id} className="border-b border-bad/20 py-1.5 wrap-anywhere last:border-0">
                <Link to="/wallets/$id" params={{ id: a.id }} className="tap font-medium">
                  {a.label}
                </Link>{' '}
                <code title={a.pubkey}>{short(a.pubkey)}</code>{' '}
                <strong className="tabular-nums">{sols(balances.get(a.id)?.balance?.sol ?? 0)}</strong>
              </li>
            ))}
          </ul>
        </>
      )}
      {unread.length > 0 && (
        <p className="warn">
          Not checked: the balance of {unread.length > 5 ? `${unread.length} wallets` : unread.map((a) => a.label).join(', ')} could not be read.
        </p>
      )}
      {children}
    </section>
  );
}
