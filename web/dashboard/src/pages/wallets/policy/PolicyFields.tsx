import type { Asset } from '../../../services/assets';
import { ActiveHoursFields } from './ActiveHoursFields';
import { AddressBook } from './AddressBook';
import { NumberField } from './fields';
import { COUNTS, type Count, type Draft, EUR_LIMITS, type EurLimit, FIELDS, type Field, LIMITS, type Limit, type Problems } from './policy-draft';

/**
 * PolicyFields are the policy's inputs, shared by the create form and the
 * editor. people, when known, is how many owners and approvers the account
 * has (the most approvals a wallet may need); assets, when known, the
 * network's (GET /assets), offered as checkboxes beside those the policy
 * lists. The EUR limits show once a EUR asset is ticked or one is set.
 */
export function PolicyFields({
  prefix,
  draft,
  problems,
  people,
  assets,
  onChange,
}: {
  prefix: string;
  draft: Draft;
  problems: Problems;
  people?: number;
  assets?: Asset[];
  onChange: (d: Draft) => void;
}) {
  const grid = 'grid grid-cols-[repeat(auto-fit,minmax(12rem,1fr))] gap-x-4 gap-y-3';
  const offered = [...(assets ?? []).map((a) => a.symbol), ...draft.assets.filter((s) => !assets?.some((a) => a.symbol === s))];
  const currency = (s: string) => assets?.find((a) => a.symbol === s)?.currency;
  // While the network's assets are unknown, any asset but USDC may be a EUR one.
  const eur =
    draft.assets.some((s) => (assets === undefined ? s !== 'USDC' : currency(s) === 'EUR')) || EUR_LIMITS.some((f) => draft[f.name].trim() !== '');
  // Ticking keeps the policy's order (its preference for x402) and adds at the end.
  const toggle = (s: string, on: boolean) =>
    onChange({ ...draft, assets: on ? [...draft.assets.filter((x) => x !== s), s] : draft.assets.filter((x) => x !== s) });
  const field = (f: { name: Field | Limit | Count | EurLimit; label: string; hint: string }, unit: string, decimal = true) => (
    <NumberField
      key={f.name}
      id={`${prefix}-${f.name}`}
      label={f.label}
      hint={f.hint}
      unit={unit}
      decimal={decimal}
      value={draft[f.name]}
      problem={problems.fields[f.name]}
      onChange={(v) => onChange({ ...draft, [f.name]: v })}
    />
  );
  return (
    <>
      <div className={`mb-3 ${grid}`}>
        {FIELDS.map((f) => field(f, 'USDC'))}
        <NumberField
          id={`${prefix}-approvals_required`}
          label="Approvals needed"
          hint={`people who must approve a parked payment${people ? ` (1 to ${people})` : ''}`}
          decimal={false}
          value={draft.approvals_required}
          problem={problems.approvals}
          onChange={(v) => onChange({ ...draft, approvals_required: v })}
        />
      </div>
      <fieldset className="mb-3">
        <legend>Assets</legend>
        <p className="hint">
          What the wallet may spend. The USD stablecoins count together under the limits above, as dollars; EUR ones under the EUR limits.
        </p>
        <div className="mt-2 flex flex-wrap gap-x-4 gap-y-1">
          {offered.map((s) => (
            <label key={s} className="tap inline-flex items-center gap-2">
              <input type="checkbox" checked={draft.assets.includes(s)} onChange={(e) => toggle(s, e.target.checked)} />
              {s}
              {currency(s) && <span className="text-sm text-muted">{currency(s)}</span>}
            </label>
          ))}
        </div>
      </fieldset>
      {eur && (
        <fieldset className="mb-3">
          <legend>EUR limits</legend>
          <p className="hint">In euros, for EUR stablecoins (EURC). Unset, the wallet pays nothing in euros.</p>
          <div className={`mt-2 ${grid}`}>{EUR_LIMITS.map((f) => field(f, 'EUR'))}</div>
        </fieldset>
      )}
      <fieldset className="mb-3">
        <legend>Optional limits</legend>
        <p className="hint">Rolling windows, counted back from each payment. Leave a field empty for no limit.</p>
        <div className={`mt-2 ${grid}`}>
          {LIMITS.map((f) => field(f, 'USDC'))}
          {COUNTS.map((f) => field(f, 'payments', false))}
        </div>
      </fieldset>
      <ActiveHoursFields prefix={prefix} draft={draft} problems={problems} onChange={onChange} />
      <AddressBook prefix={prefix} entries={draft.entries} problems={problems} onChange={(entries) => onChange({ ...draft, entries })} />
    </>
  );
}
