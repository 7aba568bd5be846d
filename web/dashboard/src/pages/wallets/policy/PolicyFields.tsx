import { ActiveHoursFields } from './ActiveHoursFields';
import { AddressBook } from './AddressBook';
import { NumberField } from './fields';
import { COUNTS, type Count, type Draft, FIELDS, type Field, LIMITS, type Limit, type Problems } from './policy-draft';

/**
 * PolicyFields are the policy's inputs, shared by the create form and the
 * editor. people, when known, is how many owners and approvers the account
 * has (the most approvals a wallet may need).
 */
export function PolicyFields({
  prefix,
  draft,
  problems,
  people,
  onChange,
}: {
  prefix: string;
  draft: Draft;
  problems: Problems;
  people?: number;
  onChange: (d: Draft) => void;
}) {
  const grid = 'grid grid-cols-[repeat(auto-fit,minmax(12rem,1fr))] gap-x-4 gap-y-3';
  const field = (f: { name: Field | Limit | Count; label: string; hint: string }, unit: string, decimal = true) => (
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
