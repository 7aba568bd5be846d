import { memo } from 'react';
import { DAYS, DAY_NAMES, type Draft, type Problems, newHours } from './policy-draft';
import { TimeField } from './fields';

// The time zones offered while typing one: every zone the browser knows
// (and UTC, which some leave out), else the most used ones.
const COMMON_ZONES = [
  'UTC',
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Los_Angeles',
  'America/Sao_Paulo',
  'Europe/London',
  'Europe/Paris',
  'Europe/Berlin',
  'Africa/Lagos',
  'Africa/Johannesburg',
  'Asia/Dubai',
  'Asia/Kolkata',
  'Asia/Singapore',
  'Asia/Shanghai',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Pacific/Auckland',
];
let zones: string[] | null = null;
function timeZones(): string[] {
  if (!zones) {
    const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    zones = all.length > 0 ? ['UTC', ...all.filter((z) => z !== 'UTC')] : COMMON_ZONES;
  }
  return zones;
}

/** ZoneList is the time zones offered, some 400: rendered once, not on every keystroke of the form. */
const ZoneList = memo(function ZoneList({ id }: { id: string }) {
  return (
    <datalist id={id}>
      {timeZones().map((z) => (
        <option key={z} value={z} />
      ))}
    </datalist>
  );
});

/**
 * ActiveHoursFields edits when the agent may pay: none (any time), or a
 * zone, days, an opening and a closing time, and what becomes of a payment
 * outside them.
 */
export function ActiveHoursFields({
  prefix,
  draft,
  problems,
  onChange,
}: {
  prefix: string;
  draft: Draft;
  problems: Problems;
  onChange: (d: Draft) => void;
}) {
  const h = draft.hours;
  const p = problems.hours;
  const id = `${prefix}-hours`;
  if (!h) {
    return (
      <fieldset className="mb-3">
        <legend>Active hours</legend>
        <p className="hint">Any time: the agent may pay at any hour of any day.</p>
        <button type="button" className="btn mt-2" onClick={() => onChange({ ...draft, hours: newHours() })}>
          Set active hours
        </button>
      </fieldset>
    );
  }
  const set = (part: Partial<typeof h>) => onChange({ ...draft, hours: { ...h, ...part } });
  return (
    <fieldset className="mb-3">
      <legend>Active hours</legend>
      <p className="hint">The agent may pay only on these days, between these times on the zone&apos;s clock.</p>
      <div className="my-2 grid gap-x-4 gap-y-3 sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)_minmax(0,1fr)]">
        <div className="field">
          <label htmlFor={`${id}-zone`}>Time zone</label>
          <input
            id={`${id}-zone`}
            list={`${id}-zones`}
            value={h.timezone}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={p.timezone !== ''}
            aria-describedby={`${id}-zone-note`}
            onChange={(e) => set({ timezone: e.target.value })}
          />
          <ZoneList id={`${id}-zones`} />
          <span id={`${id}-zone-note`} className={p.timezone ? 'field-error' : 'hint'}>
            {p.timezone || 'Region/City, like Europe/Paris; daylight saving follows it.'}
          </span>
        </div>
        <TimeField id={`${id}-from`} label="Opens at" value={h.from} problem={p.from} note="" onChange={(from) => set({ from })} />
        <TimeField
          id={`${id}-to`}
          label="Closes at"
          value={h.to}
          problem={p.to}
          note={h.to === '00:00' ? 'Midnight, the end of the day.' : h.to < h.from ? 'The next morning (overnight).' : ''}
          onChange={(to) => set({ to })}
        />
      </div>
      <fieldset className="m-0 border-0 p-0" aria-describedby={`${id}-days-note`}>
        <legend className="px-0 font-medium">Days</legend>
        <div className="flex flex-wrap gap-x-4">
          {DAYS.map((d) => (
            <label key={d} className="inline-flex min-h-11 items-center gap-2 font-normal">
              <input
                type="checkbox"
                aria-label={DAY_NAMES[d]}
                checked={h.days.includes(d)}
                onChange={(e) => set({ days: e.target.checked ? DAYS.filter((x) => x === d || h.days.includes(x)) : h.days.filter((x) => x !== d) })}
              />
              {DAY_NAMES[d].slice(0, 3)}
            </label>
          ))}
        </div>
        <span id={`${id}-days-note`} className="field-error">
          {p.days}
        </span>
      </fieldset>
      <fieldset className="m-0 mt-2 border-0 p-0">
        <legend className="px-0 font-medium">Outside these hours, a payment is</legend>
        <div className="flex flex-wrap gap-x-4">
          {(
            [
              ['block', 'Blocked'],
              ['approve', 'Parked for approval, whatever its amount'],
            ] as const
          ).map(([v, text]) => (
            <label key={v} className="inline-flex min-h-11 items-center gap-2 font-normal">
              <input
                type="radio"
                name={`${id}-outside`}
                value={v}
                checked={draft.outside_active_hours === v}
                onChange={() => onChange({ ...draft, outside_active_hours: v })}
              />
              {text}
            </label>
          ))}
        </div>
      </fieldset>
      <button type="button" className="btn mt-2" onClick={() => onChange({ ...draft, hours: null })}>
        Remove active hours
      </button>
    </fieldset>
  );
}
