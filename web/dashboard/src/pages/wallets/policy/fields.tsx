// The policy form's single inputs: an amount or a count, and a time of day,
// each with its problem (or its hint) said beside it as it is typed.

/** NumberField is one amount or count with its unit, and its problem said beside it as it is typed. */
export function NumberField(props: {
  id: string;
  label: string;
  hint: string;
  value: string;
  problem: string;
  unit?: string;
  decimal?: boolean;
  onChange: (v: string) => void;
}) {
  const { id, label, hint, value, problem, unit, decimal = true, onChange } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <span className="flex items-center gap-1.5 [&>input]:min-w-0 [&>input]:flex-1">
        <input
          id={id}
          inputMode={decimal ? 'decimal' : 'numeric'}
          autoComplete="off"
          value={value}
          aria-invalid={problem !== ''}
          aria-describedby={`${id}-note`}
          onChange={(e) => onChange(e.target.value)}
        />
        {unit && <> {unit}</>}
      </span>
      <span id={`${id}-note`} className={problem ? 'field-error' : 'hint'}>
        {problem || hint}
      </span>
    </div>
  );
}

// The time zones offered while typing one: every zone the browser knows

/** TimeField is an HH:MM time with its problem, or else its note, below. */
export function TimeField(props: { id: string; label: string; value: string; problem: string; note: string; onChange: (v: string) => void }) {
  const { id, label, value, problem, note, onChange } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="time"
        value={value}
        aria-invalid={problem !== ''}
        aria-describedby={`${id}-note`}
        onChange={(e) => onChange(e.target.value)}
      />
      <span id={`${id}-note`} className={problem ? 'field-error' : 'hint'}>
        {problem || note}
      </span>
    </div>
  );
}
