import { Link } from '@tanstack/react-router';
import { Status } from '../../components/Status';
import { amount, short, sols, usdc } from '../../format';
import type { Wallet } from '../../services/wallets';
import { Meter } from './Meter';
import type { BalanceRead } from './useOverview';

/**
 * LOW_SOL is the SOL balance under which a wallet is flagged: every send
 * pays its fee in SOL (about 0.000005 SOL a signature) and, when the
 * recipient has no USDC token account yet, its rent (about 0.002 SOL).
 * 0.01 SOL covers a few first payments to new recipients; below it the
 * next sends may fail for want of fees.
 */
export const LOW_SOL = 0.01;

/**
 * WalletCard is a wallet at a glance: its state, address, balance (read
 * from the chain: '…' until read, "unavailable" when the read failed) and
 * today's spend against its daily limit. With sponsorship on, a low SOL
 * balance is not flagged: the fee payer pays.
 */
export function WalletCard({
  wallet: a,
  read,
  spent,
  sponsored,
}: {
  wallet: Wallet;
  read: BalanceRead | undefined;
  spent: number | null;
  sponsored: boolean;
}) {
  const b = read?.balance ?? null;
  const value = (n: number | undefined, show: (n: number) => string) =>
    b && n !== undefined ? (
      show(n)
    ) : read?.error ? (
      <span className="text-warn italic" title={read.error}>
        unavailable
      </span>
    ) : (
      '…'
    );
  const frozen = a.state === 'frozen';
  return (
    <li className={`grid min-w-0 gap-1.5 rounded-md border border-line p-3 ${frozen ? 'bg-info-soft' : 'bg-surface'}`} data-wallet={a.id}>
      <div className="flex min-w-0 items-center justify-between gap-2">
        <Link to="/wallets/$id" params={{ id: a.id }} className="tap min-w-0 py-1 font-semibold wrap-anywhere">
          {a.label}
        </Link>
        <Status status={a.state} className="ov-state text-xs uppercase" />
      </div>
      <code title={a.pubkey} className="text-muted">
        {short(a.pubkey)}
      </code>
      <dl className="my-1 grid grid-cols-2 gap-2 wrap-anywhere tabular-nums">
        <div>
          <dt className="text-xs font-semibold text-muted">USDC</dt>
          <dd data-field="usdc">{value(b?.usdc, usdc)}</dd>
        </div>
        <div>
          <dt className="text-xs font-semibold text-muted">SOL</dt>
          <dd data-field="sol" className={b && b.sol < LOW_SOL && !sponsored ? 'font-bold text-bad' : undefined}>
            {value(b?.sol, sols)}
          </dd>
        </div>
      </dl>
      {b && read?.error && (
        <p className="notice m-0 text-xs" title={read.error}>
          Balance not refreshed: {read.error}
        </p>
      )}
      <SpendMeter label={a.label} spent={spent} limit={a.policy.daily_limit_usdc} />
    </li>
  );
}

/** SpendMeter is today's (UTC) spend against the daily limit, amber from 80 %, red at the limit. */
function SpendMeter({ label, spent, limit }: { label: string; spent: number | null; limit: number }) {
  if (spent === null) return <p className="notice m-0 text-sm">Today's spend: unavailable</p>;
  const share = limit > 0 ? Math.min(1, spent / limit) : 1;
  const text = `${amount(spent)} of ${usdc(limit)} today`;
  return (
    <div className="grid gap-1 text-sm">
      <span data-field="spend" className="tabular-nums">
        {text}
      </span>
      <Meter share={share} label={`${label}: spend today against the daily limit`} max={limit} value={spent} text={text} />
    </div>
  );
}
