// A policy being edited: the amounts as typed (strings, so a half-typed
// "12." is not lost) and the allowlist as an address book. Checks, the
// proposed policy and its differences from the current one are computed
// from it; the page shows them and sends only what changed.
import { addressProblem } from '../../../address';
import { amount, usdc } from '../../../format';
import type { Labels, Policy, PolicyInput } from '../../../services/wallets';

export const FIELDS = [
  { name: 'daily_limit_usdc', label: 'Daily limit', hint: 'USDC a UTC day may send in all' },
  { name: 'max_tx_usdc', label: 'Max per send', hint: 'USDC one send may move' },
  { name: 'approval_threshold_usdc', label: 'Approval from', hint: 'sends of at least this wait for a person (0: all)' },
] as const;
export type Field = (typeof FIELDS)[number]['name'];

/** LIMITS are the optional amounts: a USDC cap, or none (an empty field). */
export const LIMITS = [
  { name: 'weekly_limit_usdc', label: 'Weekly limit', hint: 'USDC the last 7 days (rolling) may send in all; empty: no limit' },
  { name: 'monthly_limit_usdc', label: 'Monthly limit', hint: 'USDC the last 30 days (rolling) may send in all; empty: no limit' },
] as const;
export type Limit = (typeof LIMITS)[number]['name'];

/**
 * EUR_LIMITS are the limits of the EUR stablecoins (EURC), in euros. Any
 * left empty is unset: the day and the per-send cap then allow nothing, the
 * threshold parks every EUR payment, the week and month have no limit.
 */
export const EUR_LIMITS = [
  { name: 'daily_limit_eur', label: 'Euros a day', hint: 'EUR a UTC day may send in all; empty: no EUR payments' },
  { name: 'max_tx_eur', label: 'Euros a send', hint: 'EUR one send may move; empty: no EUR payments' },
  { name: 'approval_threshold_eur', label: 'EUR approval threshold', hint: 'EUR sends of at least this wait for a person; empty: all wait' },
  { name: 'weekly_limit_eur', label: 'Euros a week', hint: 'EUR the last 7 days (rolling) may send; empty: no limit' },
  { name: 'monthly_limit_eur', label: 'Euros a month', hint: 'EUR the last 30 days (rolling) may send; empty: no limit' },
] as const;
export type EurLimit = (typeof EUR_LIMITS)[number]['name'];

/** COUNTS cap how many payments (sent or parked) a rolling window holds, or none (an empty field). */
export const COUNTS = [
  { name: 'max_tx_per_hour', label: 'Payments per hour', hint: 'at most this many in any 60 minutes; empty: no limit; 0 blocks every payment' },
  { name: 'max_tx_per_day', label: 'Payments per day', hint: 'at most this many in any 24 hours; empty: no limit; 0 blocks every payment' },
] as const;
export type Count = (typeof COUNTS)[number]['name'];

/** MAX_COUNT is the API's largest payment count. */
export const MAX_COUNT = 1_000_000;
/** MAX_APPROVALS is the API's largest approvals_required (the account's people bound it first). */
const MAX_APPROVALS = 1000;

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Day = (typeof DAYS)[number];
export const DAY_NAMES: Record<Day, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

/** Hours are active hours as edited: times as the time inputs hold them (HH:MM, '' while incomplete). */
export type Hours = { timezone: string; days: Day[]; from: string; to: string };
export type Outside = Policy['outside_active_hours'];

export type Entry = { key: number; address: string; label: string };
/** Rules are the policy's optional rules, each with the value that means "none" in NO_RULES. */
export type Rules = Omit<Policy, Field | 'allowlist' | 'allowlist_labels'>;
export type RuleField = keyof Rules;

/**
 * Draft is a policy being edited. Amounts and counts are text as typed; an
 * optional limit or count left empty is no limit (an EUR one: unset); hours
 * null is any time; assets are the symbols the wallet may spend, in the
 * policy's order (its preference for x402).
 */
export type Draft = Record<Field | Limit | Count | EurLimit, string> & {
  assets: string[];
  entries: Entry[];
  approvals_required: string;
  hours: Hours | null;
  outside_active_hours: Outside;
};

export const MAX_LABEL = 100;
const MAX_ALLOWLIST = 1000;

let keys = 0;
/** newEntry is an address-book row; key keeps React's rows apart while addresses are typed. */
export const newEntry = (address = '', label = ''): Entry => ({ key: ++keys, address, label });

export const NO_RULES: Rules = {
  assets: ['USDC'],
  daily_limit_eur: null,
  max_tx_eur: null,
  approval_threshold_eur: null,
  weekly_limit_eur: null,
  monthly_limit_eur: null,
  weekly_limit_usdc: null,
  monthly_limit_usdc: null,
  max_tx_per_hour: null,
  max_tx_per_day: null,
  active_hours: null,
  outside_active_hours: 'block',
  approvals_required: 1,
};

export const DEFAULT_DRAFT: Draft = {
  daily_limit_usdc: '100',
  max_tx_usdc: '25',
  approval_threshold_usdc: '10',
  weekly_limit_usdc: '',
  monthly_limit_usdc: '',
  daily_limit_eur: '',
  max_tx_eur: '',
  approval_threshold_eur: '',
  weekly_limit_eur: '',
  monthly_limit_eur: '',
  max_tx_per_hour: '',
  max_tx_per_day: '',
  approvals_required: '1',
  assets: ['USDC'],
  hours: null,
  outside_active_hours: 'block',
  entries: [],
};

/** localZone is the reader's time zone (UTC when the browser does not say). */
export const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** newHours is the window offered when active hours are added: weekdays 09:00 to 18:00 where the reader is. */
export const newHours = (timezone = localZone()): Hours => ({ timezone, days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00' });

// A time input cannot hold 24:00 (the end of the day, which the API takes
// as a closing time): the editor shows it as 00:00 and sends a closing
// 00:00 as 24:00. Both close the window at the same midnight, so reading
// either as the other changes no minute of it.
const closingShown = (to: string) => (to === '24:00' ? '00:00' : to);
const closingSent = (to: string) => (to === '00:00' ? '24:00' : to);

const isDay = (d: string): d is Day => (DAYS as readonly string[]).includes(d);

/** rulesOf is p's optional rules, those it lacks (an audit entry older than them) at their "none". */
export function rulesOf(p: Partial<Policy>): Rules {
  return {
    assets: p.assets ?? ['USDC'],
    daily_limit_eur: p.daily_limit_eur ?? null,
    max_tx_eur: p.max_tx_eur ?? null,
    approval_threshold_eur: p.approval_threshold_eur ?? null,
    weekly_limit_eur: p.weekly_limit_eur ?? null,
    monthly_limit_eur: p.monthly_limit_eur ?? null,
    weekly_limit_usdc: p.weekly_limit_usdc ?? null,
    monthly_limit_usdc: p.monthly_limit_usdc ?? null,
    max_tx_per_hour: p.max_tx_per_hour ?? null,
    max_tx_per_day: p.max_tx_per_day ?? null,
    active_hours: p.active_hours ?? null,
    outside_active_hours: p.outside_active_hours ?? 'block',
    approvals_required: p.approvals_required ?? 1,
  };
}

export function draftOf(p: Policy): Draft {
  const labels = p.allowlist_labels ?? {};
  const r = rulesOf(p);
  const text = (v: number | null) => (v === null ? '' : String(v));
  const h = r.active_hours;
  return {
    daily_limit_usdc: String(p.daily_limit_usdc),
    max_tx_usdc: String(p.max_tx_usdc),
    approval_threshold_usdc: String(p.approval_threshold_usdc),
    weekly_limit_usdc: text(r.weekly_limit_usdc),
    monthly_limit_usdc: text(r.monthly_limit_usdc),
    daily_limit_eur: text(r.daily_limit_eur),
    max_tx_eur: text(r.max_tx_eur),
    approval_threshold_eur: text(r.approval_threshold_eur),
    weekly_limit_eur: text(r.weekly_limit_eur),
    monthly_limit_eur: text(r.monthly_limit_eur),
    max_tx_per_hour: text(r.max_tx_per_hour),
    max_tx_per_day: text(r.max_tx_per_day),
    approvals_required: String(r.approvals_required),
    assets: [...r.assets],
    hours: h && { timezone: h.timezone, days: h.days.filter(isDay), from: h.from, to: closingShown(h.to) },
    outside_active_hours: r.outside_active_hours,
    entries: p.allowlist.map((a) => newEntry(a, labels[a] ?? '')),
  };
}

/** amountProblem says why s is no USDC amount the policy takes, or ''. */
export function amountProblem(s: string, positive = false): string {
  const t = s.trim();
  if (t === '') return 'Enter an amount.';
  if (!/^\d+(\.\d+)?$/.test(t)) return 'A number of USDC, like 25 or 2.5.';
  if (/\.\d{7,}$/.test(t)) return 'At most 6 decimals.';
  // Amounts travel as JSON numbers: past 15 significant digits a double
  // would send another amount than the one typed.
  if (t.replace('.', '').replace(/^0+/, '').length > 15) return 'Too many digits.';
  if (Number(t) > 1e12) return 'Too large.';
  if (positive && Number(t) === 0) return 'More than 0.';
  return '';
}

/** countProblem says why s is no payment count ('' when it is one, or empty: no limit). */
export function countProblem(s: string): string {
  const t = s.trim();
  if (t === '') return '';
  if (!/^\d+$/.test(t)) return 'A whole number, like 10.';
  if (Number(t) > MAX_COUNT) return `At most ${MAX_COUNT.toLocaleString('en-US')}.`;
  return '';
}

/** People is what the page knows of the account's people, to bound approvals_required. */
export type People = {
  /** count is the account's owners and approvers (unknown: only the API's bound). */
  count?: number;
  /** kept is the wallet's value now: it stays valid after people left (the API checks only a change). */
  kept?: number;
};

/**
 * approvalsProblem says why s is no approvals_required: a whole number
 * from 1 to the account's owners and approvers (when known).
 */
export function approvalsProblem(s: string, { count: people, kept }: People = {}): string {
  const t = s.trim();
  if (t === '') return 'Enter a number (1: one person approves).';
  if (!/^\d+$/.test(t)) return 'A whole number, like 2.';
  const n = Number(t);
  if (n < 1) return 'At least 1.';
  if (n === kept) return '';
  const most = people === undefined ? MAX_APPROVALS : Math.max(1, Math.min(people, MAX_APPROVALS));
  if (n > most) return people === undefined ? `At most ${most}.` : `At most ${most}: the account's owners and approvers.`;
  return '';
}

/** zoneProblem says why s is no time zone the browser knows (IANA names, like Europe/Paris), or ''. */
export function zoneProblem(s: string): string {
  const t = s.trim();
  if (t === '') return 'Enter a time zone, like Europe/Paris.';
  try {
    new Intl.DateTimeFormat('en', { timeZone: t });
  } catch {
    return 'Not a time zone: pick one from the list (Region/City, or UTC).';
  }
  return '';
}

const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

export type HoursProblems = { timezone: string; days: string; from: string; to: string };
const NO_HOURS_PROBLEMS: HoursProblems = { timezone: '', days: '', from: '', to: '' };

/** hoursProblems says what is wrong with active hours as edited. */
export function hoursProblems(h: Hours | null): HoursProblems {
  if (!h) return NO_HOURS_PROBLEMS;
  const from = TIME.test(h.from) ? '' : 'A time, HH:MM.';
  let to = TIME.test(closingShown(h.to)) ? '' : 'A time, HH:MM.';
  if (!from && !to && h.from === closingSent(h.to)) to = 'Must differ from the opening time.';
  return { timezone: zoneProblem(h.timezone), days: h.days.length === 0 ? 'Pick at least one day.' : '', from, to };
}

export type Problems = {
  fields: Record<Field | Limit | Count | EurLimit, string>;
  approvals: string;
  hours: HoursProblems;
  entries: { address: string; label: string }[];
  list: string;
  any: boolean;
};

/** problemsOf checks a draft; people (when known) bounds approvals_required. */
export function problemsOf(d: Draft, people: People = {}): Problems {
  const fields = Object.fromEntries([
    ...FIELDS.map((f) => [f.name, amountProblem(d[f.name])]),
    ...[...LIMITS, ...EUR_LIMITS].map((f) => [f.name, d[f.name].trim() === '' ? '' : amountProblem(d[f.name])]),
    ...COUNTS.map((f) => [f.name, countProblem(d[f.name])]),
  ]) as Record<Field | Limit | Count | EurLimit, string>;
  const approvals = approvalsProblem(d.approvals_required, people);
  const hours = hoursProblems(d.hours);
  const first = new Map<string, number>();
  const entries = d.entries.map((e, i) => {
    const address = e.address.trim();
    let a = addressProblem(address);
    if (!a) {
      const j = first.get(address);
      if (j === undefined) first.set(address, i);
      else a = `Already in the list (row ${j + 1}).`;
    }
    const label = e.label.trim().length > MAX_LABEL ? `At most ${MAX_LABEL} characters.` : '';
    return { address: a, label };
  });
  const list = d.entries.length > MAX_ALLOWLIST ? `At most ${MAX_ALLOWLIST} addresses.` : '';
  const any =
    Object.values(fields).some(Boolean) ||
    approvals !== '' ||
    Object.values(hours).some(Boolean) ||
    entries.some((e) => e.address || e.label) ||
    list !== '';
  return { fields, approvals, hours, entries, list, any };
}

/** proposedOf is the whole policy the draft stands for (check problemsOf first). */
export function proposedOf(d: Draft): Policy & { allowlist_labels: Labels } {
  const labels: Labels = {};
  for (const e of d.entries) if (e.label.trim()) labels[e.address.trim()] = e.label.trim();
  const optional = (s: string) => (s.trim() === '' ? null : Number(s.trim()));
  const h = d.hours;
  return {
    daily_limit_usdc: Number(d.daily_limit_usdc.trim()),
    max_tx_usdc: Number(d.max_tx_usdc.trim()),
    approval_threshold_usdc: Number(d.approval_threshold_usdc.trim()),
    allowlist: d.entries.map((e) => e.address.trim()),
    allowlist_labels: labels,
    weekly_limit_usdc: optional(d.weekly_limit_usdc),
    monthly_limit_usdc: optional(d.monthly_limit_usdc),
    assets: [...d.assets],
    daily_limit_eur: optional(d.daily_limit_eur),
    max_tx_eur: optional(d.max_tx_eur),
    approval_threshold_eur: optional(d.approval_threshold_eur),
    weekly_limit_eur: optional(d.weekly_limit_eur),
    monthly_limit_eur: optional(d.monthly_limit_eur),
    max_tx_per_hour: optional(d.max_tx_per_hour),
    max_tx_per_day: optional(d.max_tx_per_day),
    active_hours: h && { timezone: h.timezone.trim(), days: DAYS.filter((x) => h.days.includes(x)), from: h.from, to: closingSent(h.to) },
    outside_active_hours: d.outside_active_hours,
    approvals_required: Number(d.approvals_required.trim()),
  };
}

/** RULES name the optional rules in the order the editor and its changes list them. */
export const RULES: readonly { name: RuleField; label: string }[] = [
  { name: 'approvals_required', label: 'Approvals needed' },
  { name: 'assets', label: 'Assets' },
  ...LIMITS,
  ...EUR_LIMITS,
  ...COUNTS,
  { name: 'active_hours', label: 'Active hours' },
  { name: 'outside_active_hours', label: 'Outside active hours' },
];

/** daysText is days in short, runs of three or more as a range: "Mon–Fri", "Mon, Wed, Sat–Sun" ("every day" for all). */
export function daysText(days: readonly string[]): string {
  const on = DAYS.map((d) => days.includes(d));
  if (on.every(Boolean)) return 'every day';
  const short = (i: number) => DAY_NAMES[DAYS[i]].slice(0, 3);
  const parts: string[] = [];
  for (let i = 0; i < 7; i++) {
    if (!on[i]) continue;
    let j = i;
    while (j + 1 < 7 && on[j + 1]) j++;
    if (j - i >= 2) parts.push(`${short(i)}–${short(j)}`);
    else for (let k = i; k <= j; k++) parts.push(short(k));
    i = j;
  }
  return parts.join(', ');
}

/** hoursText is active hours in words: "Mon–Fri 09:00–18:00 (America/New_York)", or "any time". */
export function hoursText(h: Rules['active_hours']): string {
  return h ? `${daysText(h.days)} ${h.from}–${h.to} (${h.timezone})` : 'any time';
}

/** ruleText is an optional rule's value in words, as the changes and the read-only view show it. */
export function ruleText<K extends RuleField>(field: K, v: Rules[K]): string {
  switch (field) {
    case 'weekly_limit_usdc':
    case 'monthly_limit_usdc':
      return v === null ? 'no limit' : usdc(v as number);
    case 'assets':
      return (v as string[]).join(', ') || 'none';
    case 'daily_limit_eur':
    case 'max_tx_eur':
      return v === null ? 'not set: no EUR payments' : `${amount(v as number)} EUR`;
    case 'approval_threshold_eur':
      return v === null ? 'not set: every EUR payment waits' : `${amount(v as number)} EUR`;
    case 'weekly_limit_eur':
    case 'monthly_limit_eur':
      return v === null ? 'no limit' : `${amount(v as number)} EUR`;
    case 'max_tx_per_hour':
    case 'max_tx_per_day':
      return v === null ? 'no limit' : `${v} payment${v === 1 ? '' : 's'}`;
    case 'active_hours':
      return hoursText(v as Rules['active_hours']);
    case 'outside_active_hours':
      return v === 'approve' ? 'parked for approval' : 'blocked';
    default:
      return `${v} ${v === 1 ? 'person' : 'people'}`;
  }
}

const sameHours = (a: Rules['active_hours'], b: Rules['active_hours']) =>
  a === null || b === null
    ? a === b
    : a.timezone === b.timezone &&
      a.from === b.from &&
      closingSent(a.to) === closingSent(b.to) &&
      DAYS.every((d) => a.days.includes(d) === b.days.includes(d));

export type Change =
  | { kind: 'field'; field: Field; name: string; from: number; to: number }
  | { kind: 'rule'; field: RuleField; name: string; from: string; to: string }
  | { kind: 'added'; address: string; label: string }
  | { kind: 'removed'; address: string; label: string }
  | { kind: 'relabelled'; address: string; from: string; to: string };

/** ruleChanged says whether field differs between the rules a and b. */
function ruleChanged(field: RuleField, a: Rules, b: Rules): boolean {
  if (field === 'active_hours') return !sameHours(a.active_hours, b.active_hours);
  if (field === 'assets') return a.assets.join() !== b.assets.join();
  return a[field] !== b[field];
}

/**
 * changesOf lists what next changes in cur: amounts and rules old → new,
 * addresses added, removed or relabelled. A policy without a rule (an
 * audit entry older than it) has it at its "none".
 */
export function changesOf(cur: Policy, next: Policy): Change[] {
  const out: Change[] = [];
  for (const f of FIELDS) {
    if (cur[f.name] !== next[f.name]) out.push({ kind: 'field', field: f.name, name: f.label, from: cur[f.name], to: next[f.name] });
  }
  const [was, will] = [rulesOf(cur), rulesOf(next)];
  for (const r of RULES) {
    if (ruleChanged(r.name, was, will))
      out.push({ kind: 'rule', field: r.name, name: r.label, from: ruleText(r.name, was[r.name]), to: ruleText(r.name, will[r.name]) });
  }
  const wasLabel = cur.allowlist_labels ?? {};
  const willLabel = next.allowlist_labels ?? {};
  const before = new Set(cur.allowlist);
  const after = new Set(next.allowlist);
  for (const a of next.allowlist) {
    if (!before.has(a)) out.push({ kind: 'added', address: a, label: willLabel[a] ?? '' });
    else if ((wasLabel[a] ?? '') !== (willLabel[a] ?? ''))
      out.push({ kind: 'relabelled', address: a, from: wasLabel[a] ?? '', to: willLabel[a] ?? '' });
  }
  for (const a of cur.allowlist) if (!after.has(a)) out.push({ kind: 'removed', address: a, label: wasLabel[a] ?? '' });
  return out;
}

/**
 * patchOf is the PATCH body for the changes: only the amounts and rules
 * that changed (a rule removed as null, which the API reads as "remove");
 * the allowlist when its addresses changed; the labels (which the API
 * replaces whole) when a kept or added address's label changed.
 */
export function patchOf(cur: Policy, next: Policy & { allowlist_labels: Labels }): PolicyInput {
  const changes = changesOf(cur, next);
  const patch: PolicyInput = {};
  const rules = rulesOf(next);
  for (const c of changes) {
    if (c.kind === 'field') patch[c.field] = c.to;
    else if (c.kind === 'rule') Object.assign(patch, { [c.field]: rules[c.field] });
  }
  if (changes.some((c) => c.kind === 'added' || c.kind === 'removed')) patch.allowlist = next.allowlist;
  const was = cur.allowlist_labels ?? {};
  if (next.allowlist.some((a) => (was[a] ?? '') !== (next.allowlist_labels[a] ?? ''))) patch.allowlist_labels = next.allowlist_labels;
  return patch;
}

/**
 * inputOf is a whole policy as a create request's PolicyInput, leaving out
 * an empty label map and the rules it has not (a create reads an omitted
 * rule as none; approvals_required 1 and assets ["USDC"] are the defaults).
 */
export function inputOf(p: Policy & { allowlist_labels: Labels }): PolicyInput {
  const { allowlist_labels, ...rest } = p;
  const byDefault = (k: string, v: unknown) => (k === 'approvals_required' && v === 1) || (k === 'assets' && Array.isArray(v) && v.join() === 'USDC');
  const set = Object.fromEntries(Object.entries(rest).filter(([k, v]) => v !== null && !byDefault(k, v))) as PolicyInput;
  return Object.keys(allowlist_labels).length ? { ...set, allowlist_labels } : set;
}
