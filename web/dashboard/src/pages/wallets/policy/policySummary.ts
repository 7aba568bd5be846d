import { amount, usdc } from '../../../format';
import type { Policy } from '../../../services/wallets';
import { hoursText, ruleText, rulesOf } from './policy-draft';

/** policySummary is a policy in one line, for lists: the amounts, then the optional rules it has. */
export function policySummary(p: Policy): string {
  const n = p.allowlist.length;
  const r = rulesOf(p);
  const parts = [
    `max ${usdc(p.max_tx_usdc)} a send`,
    `${usdc(p.daily_limit_usdc)} a day`,
    r.weekly_limit_usdc !== null && `${usdc(r.weekly_limit_usdc)} a week`,
    r.monthly_limit_usdc !== null && `${usdc(r.monthly_limit_usdc)} a month`,
    r.max_tx_per_hour !== null && `at most ${ruleText('max_tx_per_hour', r.max_tx_per_hour)} an hour`,
    r.max_tx_per_day !== null && `at most ${ruleText('max_tx_per_day', r.max_tx_per_day)} a day`,
    r.active_hours !== null && hoursText(r.active_hours),
    r.daily_limit_eur !== null && `${amount(r.daily_limit_eur)} EUR a day`,
    `approval from ${usdc(p.approval_threshold_usdc)}`,
    r.assets.join() !== 'USDC' && `in ${r.assets.join(', ') || 'no asset'}`,
    r.approvals_required > 1 && `${r.approvals_required} approvals`,
    n === 0 ? 'any recipient' : `${n} allowed recipient${n === 1 ? '' : 's'}`,
  ];
  return parts.filter(Boolean).join(' · ');
}
