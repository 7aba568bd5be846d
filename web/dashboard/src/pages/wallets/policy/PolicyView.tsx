import { usdc } from '../../../format';
import type { Policy } from '../../../services/wallets';
import { EUR_LIMITS, FIELDS, RULES, ruleText, rulesOf } from './policy-draft';

/** PolicyView shows a policy to those who may not change it. */
export function PolicyView({ policy }: { policy: Policy }) {
  const labels = policy.allowlist_labels ?? {};
  const rules = rulesOf(policy);
  // What becomes of a payment outside the hours means nothing without them;
  // nor do the EUR limits while none is set (no EUR payments).
  const eur = EUR_LIMITS.some((f) => rules[f.name] !== null);
  const shown = RULES.filter(
    (r) => (r.name !== 'outside_active_hours' || rules.active_hours !== null) && (eur || !EUR_LIMITS.some((f) => f.name === r.name)),
  );
  return (
    <div>
      <dl className="my-2 grid grid-cols-[repeat(auto-fit,minmax(9rem,1fr))] gap-x-4 gap-y-2 [&_dt]:text-xs [&_dt]:font-semibold [&_dt]:text-muted">
        {FIELDS.map((f) => (
          <div key={f.name}>
            <dt>{f.label}</dt>
            <dd data-field={f.name}>{usdc(policy[f.name])}</dd>
          </div>
        ))}
        {shown.map((r) => (
          <div key={r.name} className={r.name === 'active_hours' ? 'col-span-full' : undefined}>
            <dt>{r.label}</dt>
            <dd data-field={r.name}>{ruleText(r.name, rules[r.name])}</dd>
          </div>
        ))}
      </dl>
      <h3>Allowlist</h3>
      {policy.allowlist.length === 0 ? (
        <p className="hint">Empty: the wallet may pay any address.</p>
      ) : (
        <ul className="m-0 grid list-none gap-1 p-0" aria-label="Allowlist">
          {policy.allowlist.map((a) => (
            <li key={a}>
              {labels[a] && <strong>{labels[a]} </strong>}
              <code>{a}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
