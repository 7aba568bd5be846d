import { money } from '../../format';
import type { Approval } from '../../services/approvals';

/** recipientShare is what an MPP charge's recipient (to) gets: the whole amount less its splits' shares. */
export const recipientShare = (a: Approval): number => a.amount - a.splits.reduce((n, s) => n + s.amount, 0);

/**
 * Splits says where an MPP charge with further recipients sends its money:
 * the recipient (to) with what the splits leave it, then each split
 * recipient with its share, every address whole. Nothing for a payment
 * with one recipient.
 */
export function Splits({ a }: { a: Approval }) {
  if (a.splits.length === 0) return null;
  const shares = [{ to: a.to, amount: recipientShare(a), recipient: true }, ...a.splits.map((s) => ({ ...s, recipient: false }))];
  const label = `Split among ${shares.length} recipients`;
  return (
    <div className="grid gap-1">
      <span className="text-sm font-semibold text-muted">{label}</span>
      <ul aria-label={label} className="m-0 grid list-none gap-1 p-0 text-sm">
        {shares.map((s, i) => (
          <li key={i} className="flex flex-wrap items-baseline gap-x-2">
            <strong className="tabular-nums">{money(s.amount, a.asset)}</strong>{' '}
            <span className="text-muted">to{s.recipient ? ' the recipient' : ''}</span> <code className="break-all">{s.to}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}
