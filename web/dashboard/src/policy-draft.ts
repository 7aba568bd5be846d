// A policy being edited: the amounts as typed (strings, so a half-typed
// "12." is not lost) and the allowlist as an address book. Checks, the
// proposed policy and its differences from the current one are computed
// from it; the page shows them and sends only what changed.
import { addressProblem } from './address';
import type { Labels, Policy, PolicyInput } from './api-wallets';

export const FIELDS = [
  { name: 'daily_limit_usdc', label: 'Daily limit', hint: 'USDC a UTC day may send in all' },
  { name: 'max_tx_usdc', label: 'Max per send', hint: 'USDC one send may move' },
  { name: 'approval_threshold_usdc', label: 'Approval from', hint: 'sends of at least this wait for a person (0: all)' },
] as const;
export type Field = (typeof FIELDS)[number]['name'];

export type Entry = { key: number; address: string; label: string };
/** Rules is the rest of a policy, which this draft keeps as it is. */
export type Rules = Omit<Policy, Field | 'allowlist' | 'allowlist_labels'>;

export type Draft = Record<Field, string> & { entries: Entry[]; rules: Rules };

export const MAX_LABEL = 100;
const MAX_ALLOWLIST = 1000;

let keys = 0;
/** newEntry is an address-book row; key keeps React's rows apart while addresses are typed. */
export const newEntry = (address = '', label = ''): Entry => ({ key: ++keys, address, label });

export const NO_RULES: Rules = {
  weekly_limit_usdc: null,
  monthly_limit_usdc: null,
  max_tx_per_hour: null,
  max_tx_per_day: null,
  active_hours: null,
  outside_active_hours: 'block',
  approvals_required: 1,
};

export const DEFAULT_DRAFT: Draft = { daily_limit_usdc: '100', max_tx_usdc: '25', approval_threshold_usdc: '10', entries: [], rules: NO_RULES };

export function draftOf(p: Policy): Draft {
  const labels = p.allowlist_labels ?? {};
  return {
    daily_limit_usdc: String(p.daily_limit_usdc),
    max_tx_usdc: String(p.max_tx_usdc),
    approval_threshold_usdc: String(p.approval_threshold_usdc),
    entries: p.allowlist.map((a) => newEntry(a, labels[a] ?? '')),
    rules: {
      weekly_limit_usdc: p.weekly_limit_usdc ?? null,
      monthly_limit_usdc: p.monthly_limit_usdc ?? null,
      max_tx_per_hour: p.max_tx_per_hour ?? null,
      max_tx_per_day: p.max_tx_per_day ?? null,
      active_hours: p.active_hours ?? null,
      outside_active_hours: p.outside_active_hours ?? 'block',
      approvals_required: p.approvals_required ?? 1,
    },
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

export type Problems = { fields: Record<Field, string>; entries: { address: string; label: string }[]; list: string; any: boolean };

export function problemsOf(d: Draft): Problems {
  const fields = Object.fromEntries(FIELDS.map((f) => [f.name, amountProblem(d[f.name])])) as Record<Field, string>;
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
  const any = Object.values(fields).some(Boolean) || entries.some((e) => e.address || e.label) || list !== '';
  return { fields, entries, list, any };
}

/** proposedOf is the whole policy the draft stands for (check problemsOf first). */
export function proposedOf(d: Draft): Policy & { allowlist_labels: Labels } {
  const labels: Labels = {};
  for (const e of d.entries) if (e.label.trim()) labels[e.address.trim()] = e.label.trim();
  return {
    ...d.rules,
    daily_limit_usdc: Number(d.daily_limit_usdc.trim()),
    max_tx_usdc: Number(d.max_tx_usdc.trim()),
    approval_threshold_usdc: Number(d.approval_threshold_usdc.trim()),
    allowlist: d.entries.map((e) => e.address.trim()),
    allowlist_labels: labels,
  };
}

export type Change =
  | { kind: 'field'; field: Field; name: string; from: number; to: number }
  | { kind: 'added'; address: string; label: string }
  | { kind: 'removed'; address: string; label: string }
  | { kind: 'relabelled'; address: string; from: string; to: string };

/** changesOf lists what next changes in cur: amounts old → new, addresses added, removed or relabelled. */
export function changesOf(cur: Policy, next: Policy): Change[] {
  const out: Change[] = [];
  for (const f of FIELDS) {
    if (cur[f.name] !== next[f.name]) out.push({ kind: 'field', field: f.name, name: f.label, from: cur[f.name], to: next[f.name] });
  }
  const was = cur.allowlist_labels ?? {};
  const will = next.allowlist_labels ?? {};
  const before = new Set(cur.allowlist);
  const after = new Set(next.allowlist);
  for (const a of next.allowlist) {
    if (!before.has(a)) out.push({ kind: 'added', address: a, label: will[a] ?? '' });
    else if ((was[a] ?? '') !== (will[a] ?? '')) out.push({ kind: 'relabelled', address: a, from: was[a] ?? '', to: will[a] ?? '' });
  }
  for (const a of cur.allowlist) if (!after.has(a)) out.push({ kind: 'removed', address: a, label: was[a] ?? '' });
  return out;
}

/**
 * patchOf is the PATCH body for the changes: only the amounts that changed;
 * the allowlist when its addresses changed; the labels (which the API
 * replaces whole) when a kept or added address's label changed.
 */
export function patchOf(cur: Policy, next: Policy & { allowlist_labels: Labels }): PolicyInput {
  const changes = changesOf(cur, next);
  const patch: PolicyInput = {};
  for (const c of changes) if (c.kind === 'field') patch[c.field] = c.to;
  if (changes.some((c) => c.kind === 'added' || c.kind === 'removed')) patch.allowlist = next.allowlist;
  const was = cur.allowlist_labels ?? {};
  if (next.allowlist.some((a) => (was[a] ?? '') !== (next.allowlist_labels[a] ?? ''))) patch.allowlist_labels = next.allowlist_labels;
  return patch;
}

/**
 * inputOf is a whole policy as a PolicyInput (creation, previews), leaving out an empty label map and the rules it has not
 * (approvals_required 1 is one approve, the default).
 */
export function inputOf(p: Policy & { allowlist_labels: Labels }): PolicyInput {
  const { allowlist_labels, ...rest } = p;
  const set = Object.fromEntries(Object.entries(rest).filter(([k, v]) => v !== null && !(k === 'approvals_required' && v === 1))) as PolicyInput;
  return Object.keys(allowlist_labels).length ? { ...set, allowlist_labels } : set;
}
