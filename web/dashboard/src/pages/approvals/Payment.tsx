import { Icon } from '../../components/Icon';
import { Status } from '../../components/Status';
import { money, short } from '../../format';
import type { Approval, ApprovalContext } from '../../services/approvals';
import { Splits } from './Splits';

/**
 * Payment is what an approval asks, first: how much, to whom (and, for an
 * MPP charge with splits, to whom else and how much each), from which
 * wallet, and while it is pending what is known of the recipient (a first
 * payment, the allowlist). ctx is null until read.
 */
export function Payment({ a, ctx }: { a: Approval; ctx: ApprovalContext | null }) {
  const pending = a.status === 'pending';
  const allowlist = ctx
    ? ctx.recipient.allowlistEmpty
      ? 'The wallet has no allowlist (any recipient)'
      : ctx.recipient.onAllowlist
        ? ctx.recipient.label
          ? `On the allowlist as “${ctx.recipient.label}”`
          : 'On the allowlist'
        : 'Not on the allowlist'
    : '';
  return (
    <section className="card p-5" aria-label="Payment">
      <p className="m-0 flex flex-wrap items-center gap-2 text-sm text-muted">
        <Status status={a.status} testId="status" />
        {a.transactionStatus && <span className="tx">transaction {a.transactionStatus}</span>}
        <span>
          {a.kind === 'send' ? 'A payment' : 'A purchase'} asked by <strong className="text-ink">{a.agentLabel}</strong>
        </span>
      </p>
      <h1 className="mt-3 mb-1 grid gap-1">
        <span className="text-3xl font-bold tabular-nums">{money(a.amount, a.asset)}</span>
        <span className="text-lg font-medium text-muted">
          to <code className="text-ink">{short(a.to)}</code>
          {a.splits.length > 0 && ` and ${a.splits.length} more`}
        </span>
      </h1>
      <div className="mt-4 grid gap-1">
        <span className="text-sm font-semibold text-muted">Recipient</span>
        <code className="block rounded-md border border-line bg-subtle px-3 py-2 text-sm break-all">{a.to}</code>
        {ctx && pending && (
          <ul className="m-0 mt-1 grid list-none gap-1 p-0 text-sm">
            {ctx.recipient.firstPayment && (
              <li className="warn flex items-center gap-1.5">
                <Icon name="alert" />
                First payment to this address
              </li>
            )}
            <li className={`flex items-center gap-1.5 ${ctx.recipient.onAllowlist ? 'text-ok' : 'text-muted'}`}>
              <Icon name={ctx.recipient.onAllowlist ? 'check' : 'dot'} />
              {allowlist}
            </li>
          </ul>
        )}
      </div>
      {a.splits.length > 0 && (
        <div className="mt-4">
          <Splits a={a} />
        </div>
      )}
      {a.memo && (
        <p className="mt-4 mb-0 rounded-md bg-subtle px-3 py-2">
          <span className="text-sm font-semibold text-muted">Memo </span>“{a.memo}”
        </p>
      )}
    </section>
  );
}
