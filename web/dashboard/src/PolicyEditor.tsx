import { memo, useEffect, useRef, useState } from 'react';
import type { Agent } from './api';
import { type Policy, type PolicyInput, type Preview, previewSend, updatePolicy } from './api-wallets';
import { addressProblem } from './address';
import { errorText, short, usdc } from './format';
import { Status } from './components/Status';
import {
  COUNTS,
  type Change,
  type Count,
  DAYS,
  DAY_NAMES,
  type Draft,
  type Entry,
  FIELDS,
  type Field,
  LIMITS,
  type Limit,
  MAX_LABEL,
  type Problems,
  RULES,
  amountProblem,
  changesOf,
  draftOf,
  hoursText,
  newEntry,
  newHours,
  patchOf,
  problemsOf,
  proposedOf,
  ruleText,
  rulesOf,
} from './policy-draft';

/** NumberField is one amount or count with its unit, and its problem said beside it as it is typed. */
function NumberField(props: {
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

/** TimeField is an HH:MM time with its problem, or else its note, below. */
function TimeField(props: { id: string; label: string; value: string; problem: string; note: string; onChange: (v: string) => void }) {
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

/**
 * ActiveHoursFields edits when the agent may pay: none (any time), or a
 * zone, days, an opening and a closing time, and what becomes of a payment
 * outside them.
 */
function ActiveHoursFields({
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

/**
 * AddressBook edits an allowlist as rows of address and optional label.
 * Each address is checked while typed (base58 of 32 bytes, no duplicate).
 */
function AddressBook({
  prefix,
  entries,
  problems,
  onChange,
}: {
  prefix: string;
  entries: Entry[];
  problems: Problems;
  onChange: (e: Entry[]) => void;
}) {
  const set = (key: number, part: Partial<Entry>) => onChange(entries.map((e) => (e.key === key ? { ...e, ...part } : e)));
  return (
    <fieldset className="mb-3">
      <legend>Allowlist</legend>
      <p className="hint">{entries.length === 0 ? 'Empty: the wallet may pay any address.' : 'The wallet may pay only these addresses.'}</p>
      {entries.length > 0 && (
        <ol aria-label="Allowlist entries" className="my-2 grid list-none gap-3 p-0">
          {entries.map((e, i) => {
            const p = problems.entries[i] ?? { address: '', label: '' };
            const id = `${prefix}-entry-${e.key}`;
            return (
              <li
                key={e.key}
                data-row={i + 1}
                className="grid items-start gap-2 border-b border-line pb-3 sm:grid-cols-[minmax(0,3fr)_minmax(0,2fr)_auto]"
              >
                <div className="field [&_input]:font-mono [&_input]:text-sm">
                  <label htmlFor={`${id}-address`}>Address {i + 1}</label>
                  <input
                    id={`${id}-address`}
                    value={e.address}
                    spellCheck={false}
                    autoComplete="off"
                    aria-invalid={p.address !== ''}
                    aria-describedby={`${id}-address-note`}
                    onChange={(ev) => set(e.key, { address: ev.target.value })}
                  />
                  <span id={`${id}-address-note`} className={p.address ? 'field-error' : 'hint'}>
                    {p.address || 'Valid address.'}
                  </span>
                </div>
                <div className="field">
                  <label htmlFor={`${id}-label`}>Label {i + 1} (optional)</label>
                  <input
                    id={`${id}-label`}
                    value={e.label}
                    maxLength={MAX_LABEL + 20}
                    aria-invalid={p.label !== ''}
                    aria-describedby={`${id}-label-note`}
                    onChange={(ev) => set(e.key, { label: ev.target.value })}
                  />
                  <span id={`${id}-label-note`} className={p.label ? 'field-error' : 'hint'}>
                    {p.label}
                  </span>
                </div>
                <button
                  type="button"
                  className="btn justify-self-start sm:mt-6"
                  aria-label={`Remove address ${i + 1}`}
                  onClick={() => onChange(entries.filter((x) => x.key !== e.key))}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ol>
      )}
      {problems.list && <p className="field-error">{problems.list}</p>}
      <button type="button" className="btn" onClick={() => onChange([...entries, newEntry()])}>
        Add address
      </button>
    </fieldset>
  );
}

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

/** PolicyView shows a policy to those who may not change it. */
export function PolicyView({ policy }: { policy: Policy }) {
  const labels = policy.allowlist_labels ?? {};
  const rules = rulesOf(policy);
  // What becomes of a payment outside the hours means nothing without them.
  const shown = RULES.filter((r) => r.name !== 'outside_active_hours' || rules.active_hours !== null);
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
    `approval from ${usdc(p.approval_threshold_usdc)}`,
    r.approvals_required > 1 && `${r.approvals_required} approvals`,
    n === 0 ? 'any recipient' : `${n} allowed recipient${n === 1 ? '' : 's'}`,
  ];
  return parts.filter(Boolean).join(' · ');
}

function ChangeItem({ c }: { c: Change }) {
  switch (c.kind) {
    case 'field':
      return (
        <li data-change={c.field}>
          {c.name}: <del>{usdc(c.from)}</del> → <ins>{usdc(c.to)}</ins>
        </li>
      );
    case 'rule':
      return (
        <li data-change={c.field}>
          {c.name}: <del>{c.from}</del> → <ins>{c.to}</ins>
        </li>
      );
    case 'added':
      return (
        <li data-change="added">
          Allowlist: added <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'removed':
      return (
        <li data-change="removed">
          Allowlist: removed <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'relabelled':
      return (
        <li data-change="relabelled">
          Allowlist: <code>{short(c.address)}</code> relabelled <del>{c.from || 'no label'}</del> → <ins>{c.to || 'no label'}</ins>
        </li>
      );
  }
}

/** Diff lists the changes a save would make. */
export function Diff({ changes, testid }: { changes: Change[]; testid?: string }) {
  return (
    <ul
      className="my-1 grid gap-1 pl-5 [&_code]:break-all [&_del]:text-bad [&_ins]:font-semibold [&_ins]:text-ok [&_ins]:no-underline"
      data-testid={testid}
    >
      {changes.map((c, i) => (
        <ChangeItem key={i} c={c} />
      ))}
    </ul>
  );
}

type Rule = NonNullable<Preview['rule']>;

/** RULE_NAMES name the rule that decides a preview as the editor labels its field. */
const RULE_NAMES = {
  ...Object.fromEntries([...FIELDS, ...RULES].map((f) => [f.name, f.label])),
  state: 'the wallet is frozen',
  allowlist: 'Allowlist',
} as Record<Rule, string>;

function Outcome({ p, testid }: { p: Preview; testid: string }) {
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
function Figures({ r }: { r: Preview }) {
  const cap = (n: number, max: number | null) => (max === null ? `${n} (no limit)` : `${n} of ${max}`);
  const left = (v: number | null, what: string) => (v === null ? `no ${what} limit` : usdc(v));
  const items: { rule?: Rule; label: string; value: string; testid?: string }[] = [
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

/**
 * TrySend previews a send under the proposed policy (and the current one,
 * for comparison) before the owner saves: nothing is sent or reserved.
 * proposed is what a save would send (the API reads a preview's policy as
 * a change of the wallet's, so a rule removed is sent as null); null while
 * the draft has errors.
 */
function TrySend({ walletId, proposed, changed }: { walletId: string; proposed: PolicyInput | null; changed: boolean }) {
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
  const [memo, setMemo] = useState('');
  const [result, setResult] = useState<{ next: Preview; now: Preview | null } | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const policyKey = JSON.stringify(proposed);
  // A result is about the policy it was asked under: a change drops it,
  // and an answer to a question about an older draft is not shown.
  const current = useRef(policyKey);
  current.current = policyKey;
  useEffect(() => {
    setResult(null);
  }, [policyKey]);

  const toProblem = to === '' ? '' : addressProblem(to.trim());
  const amountIssue = amount === '' ? '' : amountProblem(amount, true);
  const ready = proposed !== null && to !== '' && amount !== '' && !toProblem && !amountIssue;

  async function run() {
    if (!ready || !proposed) return;
    setBusy(true);
    setError('');
    const body = { to: to.trim(), amount: Number(amount.trim()), ...(memo.trim() ? { memo: memo.trim() } : {}) };
    const asked = policyKey;
    try {
      const [next, now] = await Promise.all([
        previewSend(walletId, body, changed ? proposed : undefined),
        changed ? previewSend(walletId, body) : Promise.resolve(null),
      ]);
      if (asked === current.current) setResult({ next, now });
    } catch (e) {
      setResult(null);
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  const r = result?.next;
  return (
    <form
      className="mt-4 border-t border-line pt-1"
      aria-label="Try a send"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
    >
      <h3>Try a send</h3>
      <p className="hint">What a send would do under the {changed ? 'proposed' : 'current'} policy. Nothing is sent.</p>
      <div className="my-2 grid gap-x-4 gap-y-2 sm:grid-cols-[minmax(0,3fr)_minmax(0,1.4fr)_minmax(0,2fr)]">
        <div className="field [&_input]:font-mono [&_input]:text-sm">
          <label htmlFor="try-to">To</label>
          <input
            id="try-to"
            value={to}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={toProblem !== ''}
            aria-describedby="try-to-note"
            onChange={(e) => setTo(e.target.value)}
          />
          <span id="try-to-note" className={toProblem ? 'field-error' : 'hint'}>
            {toProblem}
          </span>
        </div>
        <div className="field">
          <label htmlFor="try-amount">Amount</label>
          <span className="flex items-center gap-1.5 [&>input]:min-w-0 [&>input]:flex-1">
            <input
              id="try-amount"
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              aria-invalid={amountIssue !== ''}
              aria-describedby="try-amount-note"
              onChange={(e) => setAmount(e.target.value)}
            />{' '}
            USDC
          </span>
          <span id="try-amount-note" className={amountIssue ? 'field-error' : 'hint'}>
            {amountIssue}
          </span>
        </div>
        <div className="field">
          <label htmlFor="try-memo">Memo (optional)</label>
          <input id="try-memo" value={memo} maxLength={200} onChange={(e) => setMemo(e.target.value)} />
        </div>
      </div>
      <button type="submit" className="btn" disabled={!ready || busy}>
        {busy ? 'Trying…' : 'Try it'}
      </button>
      {proposed === null && <p className="hint">Fix the policy's errors to try a send.</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {r && result && (
        <div className="mt-3 rounded-md bg-subtle px-3 py-2 [&_p]:my-1" role="status">
          <p>
            {changed ? 'Under the proposed policy' : 'Under the current policy'}: <Outcome p={r} testid="preview-outcome" />
          </p>
          {result.now && (
            <p>
              Under the current policy: <Outcome p={result.now} testid="preview-current" />
            </p>
          )}
          <Figures r={r} />
        </div>
      )}
    </form>
  );
}

/**
 * PolicyEditor lets an owner change a wallet's policy: the amounts, the
 * optional rules and the allowlist checked while typed, the changes listed
 * old → new, a send tried against the proposed policy, and a save that
 * sends only what changed. people, when known, is the account's owners and
 * approvers (the most approvals a wallet may need).
 */
export function PolicyEditor({ agent, people, onSaved }: { agent: Agent; people?: number; onSaved: (a: Agent) => void }) {
  const current = agent.policy;
  const [draft, setDraft] = useState<Draft>(() => draftOf(current));
  // base is the policy the draft started from. When the page sees another
  // policy (someone else saved one), an untouched draft follows it; an
  // edited one stays, and its changes are then shown against the new one.
  const [base, setBase] = useState(current);
  const [moved, setMoved] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const problems = problemsOf(draft, { count: people, kept: current.approvals_required });
  const next = problems.any ? null : proposedOf(draft);
  const changes = next ? changesOf(current, next) : [];

  const currentKey = JSON.stringify(current);
  useEffect(() => {
    if (JSON.stringify(base) === currentKey) return;
    const untouched = !problemsOf(draft).any && changesOf(base, proposedOf(draft)).length === 0;
    if (untouched) setDraft(draftOf(current));
    else setMoved(true);
    setBase(current);
  }, [currentKey]);

  async function save() {
    if (!next || changes.length === 0) return;
    setBusy(true);
    setError('');
    setSaved(false);
    try {
      const a = await updatePolicy(agent.id, patchOf(current, next));
      setDraft(draftOf(a.policy));
      setBase(a.policy);
      setMoved(false);
      setSaved(true);
      onSaved(a);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div>
      <form
        id="policy-form"
        aria-label="Edit the policy"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <PolicyFields
          prefix="policy"
          draft={draft}
          problems={problems}
          people={people}
          onChange={(d) => {
            setDraft(d);
            setSaved(false);
          }}
        />
      </form>
      <section className="mt-4 border-t border-line pt-1" aria-label="Changes">
        <h3>Changes</h3>
        {moved && (
          <p className="warn" role="status">
            The policy was changed by someone else while you edited it: the changes below are against the policy as it is now.
          </p>
        )}
        {problems.any ? (
          <p className="field-error">Fix the errors above to see the changes and save.</p>
        ) : changes.length === 0 ? (
          <p className="hint">{saved ? 'Saved.' : 'No changes.'}</p>
        ) : (
          <Diff changes={changes} testid="diff" />
        )}
      </section>
      <TrySend walletId={agent.id} proposed={next ? patchOf(current, next) : null} changed={changes.length > 0} />
      {error && (
        <p role="alert" className="error">
          Not saved: {error}
        </p>
      )}
      <div className="buttons mt-4">
        <button type="submit" form="policy-form" className="btn btn-primary" disabled={!next || changes.length === 0 || busy}>
          {busy ? 'Saving…' : 'Save policy'}
        </button>
        <button
          className="btn"
          type="button"
          disabled={busy || (changes.length === 0 && !problems.any)}
          onClick={() => {
            setDraft(draftOf(current));
            setMoved(false);
            setError('');
          }}
        >
          Discard changes
        </button>
      </div>
    </div>
  );
}
