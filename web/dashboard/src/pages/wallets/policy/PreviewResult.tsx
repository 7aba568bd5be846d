import { Status } from '../../../components/Status';
import { amount, usdc } from '../../../format';
import type { Preview } from '../../../services/wallets';
import { FIELDS, RULES } from './policy-draft';

type Rule = NonNullable<Preview['rule']>;

/** RULE_NAMES name the rule that decides a preview as the editor labels its field. */
const RULE_NAMES = {
  ...Object.fromEntries([...FIELDS, ...RULES].map((f) => [f.name, f.label])),
  state: 'the wallet is frozen',
  allowlist: 'Allowlist',
} as Record<Rule, string>;

export function Outcome({ p, testid }: { p: Preview; testid: string }) {
  return (
    <span data-testid={testid}>
      <Status status={p.outcome} label={p.outcome === 'pending_approval' ? 'pending approval' : p.outcome} data-outcome={p.outcome} />
      {p.reason && (
        <>
          {' '}
          <code data-reason={p.reason}>{p.reason}</code>
        </>
      )}
      {p.rule && (
        <>
          {' '}
          · decided by <strong data-rule={p.rule}>{RULE_NAMES[p.rule] ?? p.rule}</strong>
        </>
      )}
    </span>
  );
}

/** Figures are what a preview counted against the limits; the deciding rule's figure stands out. */
export function Figures({ r }: { r: Preview }) {
  const cap = (n: number, max: number | null) => (max === null ? `${n} (no limit)` : `${n} of ${max}`);
  const left = (v: number | null, what: string) => (v === null ? `no ${what} limit` : usdc(v));
  // A EUR payment meets the EUR day first; the other figures are the USD ones.
  const eur =
    r.currency === 'EUR'
      ? [
          { label: 'Spent today (EUR)', value: `${amount(r.spent_today_eur)} EUR` },
          {
            rule: 'daily_limit_eur' as const,
            label: 'Remaining today (EUR)',
            value: r.daily_limit_eur === null ? 'no EUR limits: no EUR payments' : `${amount(r.remaining_today_eur)} EUR`,
            testid: 'preview-remaining-eur',
          },
        ]
      : [];
  const items: { rule?: Rule; label: string; value: string; testid?: string }[] = [
    ...eur,
    { label: 'Spent today', value: usdc(r.spent_today_usdc) },
    { rule: 'daily_limit_usdc', label: 'Remaining today', value: usdc(r.remaining_today_usdc), testid: 'preview-remaining' },
    { label: 'Spent in 7 days', value: usdc(r.spent_week_usdc) },
    { rule: 'weekly_limit_usdc', label: 'Remaining this week', value: left(r.remaining_week_usdc, 'weekly'), testid: 'preview-remaining-week' },
    { label: 'Spent in 30 days', value: usdc(r.spent_month_usdc) },
    { rule: 'monthly_limit_usdc', label: 'Remaining this month', value: left(r.remaining_month_usdc, 'monthly'), testid: 'preview-remaining-month' },
    { rule: 'max_tx_per_hour', label: 'Payments in the last hour', value: cap(r.payments_last_hour, r.max_tx_per_hour), testid: 'preview-hour' },
    { rule: 'max_tx_per_day', label: 'Payments in 24 hours', value: cap(r.payments_last_day, r.max_tx_per_day), testid: 'preview-day' },
    {
      rule: 'active_hours',
      label: 'Within active hours',
      value: r.within_active_hours === null ? 'no active hours' : r.within_active_hours ? 'yes' : 'no',
      testid: 'preview-within',
    },
    { rule: 'max_tx_usdc', label: 'Max per send', value: usdc(r.max_tx_usdc) },
    { rule: 'approval_threshold_usdc', label: 'Approval from', value: usdc(r.approval_threshold_usdc) },
    { label: 'Approvals needed', value: String(r.approvals_required), testid: 'preview-approvals' },
  ];
  return (
    <dl className="my-2 grid grid-cols-[repeat(auto-fit,minmax(9rem,1fr))] gap-x-4 gap-y-2 tabular-nums [&_dt]:text-xs [&_dt]:font-semibold [&_dt]:text-muted">
      {items.map((f) => {
        const deciding = f.rule !== undefined && f.rule === r.rule;
        return (
          <div key={f.label} data-deciding={deciding || undefined} className={deciding ? 'rounded-sm font-semibold text-warn' : undefined}>
            <dt>{f.label}</dt>
            <dd data-testid={f.testid}>{f.value}</dd>
          </div>
        );
      })}
    </dl>
  );
}
