import bs58 from 'bs58';
import { describe, expect, test } from 'vitest';
import type { Policy } from '../../../services/wallets';
import { policy } from '../../../test-fixtures';
import {
  type Draft,
  DEFAULT_DRAFT,
  NO_RULES,
  amountProblem,
  approvalsProblem,
  changesOf,
  countProblem,
  daysText,
  draftOf,
  hoursProblems,
  hoursText,
  inputOf,
  newEntry,
  newHours,
  patchOf,
  problemsOf,
  proposedOf,
  ruleText,
  zoneProblem,
} from './policy-draft';

const A = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const B = bs58.encode(new Uint8Array(32).fill(7));
const C = bs58.encode(new Uint8Array(32).fill(9));

const draft = (d: Partial<Draft> = {}): Draft => ({ ...DEFAULT_DRAFT, ...d });

// Each check of a field's text, and what it says of each text ('' when it is fine).
const INPUT = 'A number of USDC, like 25 or 2.5.';
const COUNT = 'A whole number, like 10.';
const ZONE = 'Not a time zone: pick one from the list (Region/City, or UTC).';
describe.each<{ check: (s: string) => string; cases: [string, string][] }>([
  {
    check: amountProblem,
    cases: [
      ['25', ''],
      ['2.5', ''],
      ['0', ''],
      [' 12 ', ''],
      ['0.000001', ''],
      ['999999999999.999', ''],
      ['', 'Enter an amount.'],
      ['   ', 'Enter an amount.'],
      ['12.', INPUT],
      ['.5', INPUT],
      ['-1', INPUT],
      ['1e3', INPUT],
      ['1,000', INPUT],
      ['ten', INPUT],
      ['1.1234567', 'At most 6 decimals.'],
      ['1234567890123456', 'Too many digits.'],
      ['1234567890.123456', 'Too many digits.'],
      ['1000000000001', 'Too large.'],
    ],
  },
  {
    check: countProblem,
    cases: [
      ['', ''],
      ['0', ''],
      [' 12 ', ''],
      ['1000000', ''],
      ['1000001', 'At most 1,000,000.'],
      ['1.5', COUNT],
      ['-1', COUNT],
      ['ten', COUNT],
    ],
  },
  {
    check: zoneProblem,
    cases: [
      ['Europe/Paris', ''],
      ['UTC', ''],
      [' America/New_York ', ''],
      ['', 'Enter a time zone, like Europe/Paris.'],
      ['Mars/Olympus', ZONE],
      ['Local', ZONE],
    ],
  },
])('$check.name', ({ check, cases }) => {
  test.each(cases)('%j → %j', (s, want) => {
    expect(check(s)).toBe(want);
  });
});

describe('amountProblem', () => {
  test('a send’s amount must be more than 0', () => {
    expect(amountProblem('0', true)).toBe('More than 0.');
    expect(amountProblem('0.000', true)).toBe('More than 0.');
    expect(amountProblem('0.01', true)).toBe('');
  });
});

test('draftOf writes a policy’s amounts as text and its allowlist as labelled rows', () => {
  const d = draftOf(policy({ daily_limit_usdc: 2.5, allowlist: [A, B], allowlist_labels: { B: 'unused', [B]: 'Supplier B' } }));
  expect(d.daily_limit_usdc).toBe('2.5');
  expect(d.max_tx_usdc).toBe('20');
  expect(d.approval_threshold_usdc).toBe('10');
  expect(d.entries.map((e) => [e.address, e.label])).toEqual([
    [A, ''],
    [B, 'Supplier B'],
  ]);
  expect(new Set(d.entries.map((e) => e.key)).size).toBe(2);
});

describe('problemsOf', () => {
  test('a valid draft has none', () => {
    const p = problemsOf(draft({ entries: [newEntry(A, 'Acme'), newEntry(` ${B} `)] }));
    expect(p.any).toBe(false);
    expect(p.fields).toEqual({
      daily_limit_usdc: '',
      max_tx_usdc: '',
      approval_threshold_usdc: '',
      weekly_limit_usdc: '',
      monthly_limit_usdc: '',
      daily_limit_eur: '',
      max_tx_eur: '',
      approval_threshold_eur: '',
      weekly_limit_eur: '',
      monthly_limit_eur: '',
      max_tx_per_hour: '',
      max_tx_per_day: '',
    });
    expect(p.approvals).toBe('');
    expect(p.hours).toEqual({ timezone: '', days: '', from: '', to: '' });
    expect(p.entries).toEqual([
      { address: '', label: '' },
      { address: '', label: '' },
    ]);
  });

  test('says which amount is wrong', () => {
    const p = problemsOf(draft({ max_tx_usdc: '12.', approval_threshold_usdc: '' }));
    expect(p.any).toBe(true);
    expect(p.fields).toMatchObject({
      daily_limit_usdc: '',
      max_tx_usdc: 'A number of USDC, like 25 or 2.5.',
      approval_threshold_usdc: 'Enter an amount.',
    });
  });

  test('flags a bad address, a repeated one (naming the first row) and a long label', () => {
    const p = problemsOf(draft({ entries: [newEntry(A), newEntry('0x12'), newEntry(` ${A}`), newEntry(B, 'x'.repeat(101)), newEntry('')] }));
    expect(p.any).toBe(true);
    expect(p.entries).toEqual([
      { address: '', label: '' },
      { address: '“0” is not a base58 character (no 0, O, I or l).', label: '' },
      { address: 'Already in the list (row 1).', label: '' },
      { address: '', label: 'At most 100 characters.' },
      { address: 'Enter an address.', label: '' },
    ]);
  });

  test('a label of 100 characters (after trimming) is fine', () => {
    expect(problemsOf(draft({ entries: [newEntry(A, ` ${'x'.repeat(100)} `)] })).any).toBe(false);
  });

  test('at most 1000 addresses', () => {
    const entries = Array.from({ length: 1001 }, (_, i) =>
      newEntry(bs58.encode(Uint8Array.from({ length: 32 }, (_, j) => (j < 2 ? i >> (8 * j) : 1) & 0xff))),
    );
    const p = problemsOf(draft({ entries }));
    expect(p.list).toBe('At most 1000 addresses.');
    expect(p.any).toBe(true);
    expect(problemsOf(draft({ entries: entries.slice(1) })).any).toBe(false);
  });
});

test('proposedOf turns the text into numbers, trims, and keeps only the labels given', () => {
  const d = draft({
    daily_limit_usdc: ' 50 ',
    max_tx_usdc: '2.5',
    approval_threshold_usdc: '0',
    entries: [newEntry(` ${A}`, ' Acme '), newEntry(B, '  ')],
  });
  expect(proposedOf(d)).toEqual({
    daily_limit_usdc: 50,
    max_tx_usdc: 2.5,
    approval_threshold_usdc: 0,
    allowlist: [A, B],
    allowlist_labels: { [A]: 'Acme' },
    ...NO_RULES,
  });
});

describe('changesOf and patchOf', () => {
  const cur = policy({ allowlist: [A, B], allowlist_labels: { [A]: 'Acme' } });
  const next = (p: Partial<Policy>) => ({ ...cur, allowlist_labels: { [A]: 'Acme' }, ...p });

  test('no change: nothing listed, an empty patch', () => {
    expect(changesOf(cur, next({}))).toEqual([]);
    expect(patchOf(cur, next({}))).toEqual({});
  });

  test('an amount: old → new, and only that amount is sent', () => {
    const n = next({ max_tx_usdc: 8, approval_threshold_usdc: 0 });
    expect(changesOf(cur, n)).toEqual([
      { kind: 'field', field: 'max_tx_usdc', name: 'Max per send', from: 20, to: 8 },
      { kind: 'field', field: 'approval_threshold_usdc', name: 'Approval from', from: 10, to: 0 },
    ]);
    expect(patchOf(cur, n)).toEqual({ max_tx_usdc: 8, approval_threshold_usdc: 0 });
  });

  test('an address added or removed sends the whole allowlist, and labels only when one changed', () => {
    const n = next({ allowlist: [A, C] });
    expect(changesOf(cur, n)).toEqual([
      { kind: 'added', address: C, label: '' },
      { kind: 'removed', address: B, label: '' },
    ]);
    expect(patchOf(cur, n)).toEqual({ allowlist: [A, C] });

    const labelled = next({ allowlist: [A, B, C], allowlist_labels: { [A]: 'Acme', [C]: 'Carol' } });
    expect(changesOf(cur, labelled)).toEqual([{ kind: 'added', address: C, label: 'Carol' }]);
    expect(patchOf(cur, labelled)).toEqual({ allowlist: [A, B, C], allowlist_labels: { [A]: 'Acme', [C]: 'Carol' } });
  });

  test('removing a labelled address says its label; the others keep theirs without sending labels', () => {
    const n = next({ allowlist: [B], allowlist_labels: {} });
    expect(changesOf(cur, n)).toEqual([{ kind: 'removed', address: A, label: 'Acme' }]);
    expect(patchOf(cur, n)).toEqual({ allowlist: [B] });
  });

  test('a relabel sends all the labels (the API replaces them whole) and not the allowlist', () => {
    const n = next({ allowlist_labels: { [A]: 'Acme Ltd', [B]: 'Bob' } });
    expect(changesOf(cur, n)).toEqual([
      { kind: 'relabelled', address: A, from: 'Acme', to: 'Acme Ltd' },
      { kind: 'relabelled', address: B, from: '', to: 'Bob' },
    ]);
    expect(patchOf(cur, n)).toEqual({ allowlist_labels: { [A]: 'Acme Ltd', [B]: 'Bob' } });
  });
});

test('inputOf leaves out an empty label map', () => {
  const p = { ...policy({ allowlist: [A] }), allowlist_labels: {} };
  const input = { daily_limit_usdc: 100, max_tx_usdc: 20, approval_threshold_usdc: 10, allowlist: [A], outside_active_hours: 'block' };
  expect(inputOf(p)).toEqual(input);
  expect(inputOf({ ...p, allowlist_labels: { [A]: 'Acme' } })).toEqual({ ...input, allowlist_labels: { [A]: 'Acme' } });
});

test('inputOf keeps the rules the policy has and leaves out the others', () => {
  const p = { ...policy({ weekly_limit_usdc: 300, max_tx_per_hour: 10 }), allowlist_labels: {} };
  expect(inputOf(p)).toEqual({
    daily_limit_usdc: 100,
    max_tx_usdc: 20,
    approval_threshold_usdc: 10,
    allowlist: [],
    weekly_limit_usdc: 300,
    max_tx_per_hour: 10,
    outside_active_hours: 'block',
  });
});

test('a draft keeps the rules it does not edit', () => {
  const hours = { timezone: 'America/New_York', days: ['mon', 'tue'], from: '09:00', to: '18:00' };
  const p = policy({ monthly_limit_usdc: 900, active_hours: hours, outside_active_hours: 'approve' });
  expect(proposedOf({ ...draftOf(p), daily_limit_usdc: '60' })).toMatchObject({
    daily_limit_usdc: 60,
    monthly_limit_usdc: 900,
    active_hours: hours,
    outside_active_hours: 'approve',
  });
  expect(patchOf(p, proposedOf({ ...draftOf(p), daily_limit_usdc: '60' }))).toEqual({ daily_limit_usdc: 60 });
});

// The optional rules: approvals_required, the weekly and monthly limits,
// the payment counts, active hours and what happens outside them.
const HOURS = { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00' };
const RULES: Partial<Policy> = {
  approvals_required: 2,
  weekly_limit_usdc: 300,
  monthly_limit_usdc: 1000.5,
  max_tx_per_hour: 10,
  max_tx_per_day: 0,
  active_hours: HOURS,
  outside_active_hours: 'approve',
};
const ruled = policy(RULES);

test('draftOf writes the rules as text, an absent one as an empty field, and a closing 24:00 as 00:00', () => {
  const d = draftOf(ruled);
  expect([d.approvals_required, d.weekly_limit_usdc, d.monthly_limit_usdc, d.max_tx_per_hour, d.max_tx_per_day]).toEqual([
    '2',
    '300',
    '1000.5',
    '10',
    '0',
  ]);
  expect(d.hours).toEqual(HOURS);
  expect(d.outside_active_hours).toBe('approve');

  const none = draftOf(policy());
  expect([none.approvals_required, none.weekly_limit_usdc, none.monthly_limit_usdc, none.max_tx_per_hour, none.max_tx_per_day]).toEqual([
    '1',
    '',
    '',
    '',
    '',
  ]);
  expect(none.hours).toBeNull();
  expect(none.outside_active_hours).toBe('block');

  expect(draftOf(policy({ active_hours: { ...HOURS, from: '00:00', to: '24:00' } })).hours).toMatchObject({ from: '00:00', to: '00:00' });
});

test('a policy with every rule comes back from its draft unchanged', () => {
  for (const p of [ruled, policy({ active_hours: { ...HOURS, days: ['sun', 'sat'], from: '22:00', to: '24:00' } }), policy()]) {
    expect(changesOf(p, proposedOf(draftOf(p)))).toEqual([]);
    expect(patchOf(p, { ...proposedOf(draftOf(p)), allowlist_labels: {} })).toEqual({});
  }
});

describe('checks of the rules', () => {
  test.each([
    ['1', {}, ''],
    [' 3 ', {}, ''],
    ['', {}, 'Enter a number (1: one person approves).'],
    ['0', {}, 'At least 1.'],
    ['1.5', {}, 'A whole number, like 2.'],
    ['two', {}, 'A whole number, like 2.'],
    ['1001', {}, 'At most 1000.'],
    ['3', { count: 3 }, ''],
    ['4', { count: 3 }, "At most 3: the account's owners and approvers."],
    ['1', { count: 0 }, ''],
    ['2', { count: 0 }, "At most 1: the account's owners and approvers."],
    // People left since it was set: the value kept stays valid, a new one is bound.
    ['4', { count: 2, kept: 4 }, ''],
    ['3', { count: 2, kept: 4 }, "At most 2: the account's owners and approvers."],
  ])('approvals %j with %j → %j', (s, people, want) => {
    expect(approvalsProblem(s, people)).toBe(want);
  });

  test('active hours: none have no problem; times are HH:MM, at least one day, opening and closing differ', () => {
    expect(hoursProblems(null)).toEqual({ timezone: '', days: '', from: '', to: '' });
    expect(hoursProblems(newHours('UTC'))).toEqual({ timezone: '', days: '', from: '', to: '' });
    expect(hoursProblems({ timezone: '', days: [], from: '', to: '9:00' })).toEqual({
      timezone: 'Enter a time zone, like Europe/Paris.',
      days: 'Pick at least one day.',
      from: 'A time, HH:MM.',
      to: 'A time, HH:MM.',
    });
    expect(hoursProblems({ ...newHours('UTC'), from: '24:00', to: '25:00' })).toMatchObject({ from: 'A time, HH:MM.', to: 'A time, HH:MM.' });
    expect(hoursProblems({ ...newHours('UTC'), from: '09:00', to: '09:00' }).to).toBe('Must differ from the opening time.');
    // 00:00 to 00:00 is the whole day (closing at the next midnight); overnight is fine.
    expect(hoursProblems({ ...newHours('UTC'), from: '00:00', to: '00:00' }).to).toBe('');
    expect(hoursProblems({ ...newHours('UTC'), from: '22:00', to: '06:00' }).to).toBe('');
  });

  test('problemsOf: an empty limit or count is none; a bad one, the approvals and the hours make the draft wrong', () => {
    expect(problemsOf(draft({ weekly_limit_usdc: ' ', max_tx_per_day: '' })).any).toBe(false);
    const p = problemsOf(
      draft({ weekly_limit_usdc: '12.', max_tx_per_hour: '2.5', approvals_required: '3', hours: { ...newHours('UTC'), days: [] } }),
      {
        count: 2,
      },
    );
    expect(p.fields).toMatchObject({
      weekly_limit_usdc: 'A number of USDC, like 25 or 2.5.',
      monthly_limit_usdc: '',
      max_tx_per_hour: 'A whole number, like 10.',
    });
    expect(p.approvals).toBe("At most 2: the account's owners and approvers.");
    expect(p.hours.days).toBe('Pick at least one day.');
    expect(p.any).toBe(true);
    expect(problemsOf(draft({ hours: { ...newHours('UTC'), to: '' } })).any).toBe(true);
    expect(problemsOf(draft({ approvals_required: '0' })).any).toBe(true);
  });
});

test('proposedOf: an empty field is no rule (null); days Monday first, trimmed zone, a closing 00:00 sent as 24:00', () => {
  const d = draft({
    weekly_limit_usdc: ' 300 ',
    monthly_limit_usdc: '',
    max_tx_per_hour: '0',
    max_tx_per_day: '',
    approvals_required: ' 2',
    hours: { timezone: ' Europe/Paris ', days: ['sun', 'mon', 'wed'], from: '08:30', to: '00:00' },
    outside_active_hours: 'approve',
  });
  expect(proposedOf(d)).toMatchObject({
    weekly_limit_usdc: 300,
    monthly_limit_usdc: null,
    max_tx_per_hour: 0,
    max_tx_per_day: null,
    approvals_required: 2,
    active_hours: { timezone: 'Europe/Paris', days: ['mon', 'wed', 'sun'], from: '08:30', to: '24:00' },
    outside_active_hours: 'approve',
  });
  expect(proposedOf(draft()).active_hours).toBeNull();
});

describe('the rules in words', () => {
  test.each([
    [['mon', 'tue', 'wed', 'thu', 'fri'], 'Mon–Fri'],
    [['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], 'every day'],
    [['sat', 'sun'], 'Sat, Sun'],
    [['mon', 'wed', 'thu', 'fri', 'sun'], 'Mon, Wed–Fri, Sun'],
    [['fri'], 'Fri'],
  ])('%j → %s', (days, want) => {
    expect(daysText(days)).toBe(want);
  });

  test('each rule and its none', () => {
    expect(hoursText(HOURS)).toBe('Mon–Fri 09:00–18:00 (America/New_York)');
    expect(hoursText(null)).toBe('any time');
    expect(ruleText('weekly_limit_usdc', 300)).toBe('300.00 USDC');
    expect(ruleText('monthly_limit_usdc', null)).toBe('no limit');
    expect(ruleText('max_tx_per_hour', 1)).toBe('1 payment');
    expect(ruleText('max_tx_per_day', 0)).toBe('0 payments');
    expect(ruleText('max_tx_per_day', null)).toBe('no limit');
    expect(ruleText('approvals_required', 1)).toBe('1 person');
    expect(ruleText('approvals_required', 2)).toBe('2 people');
    expect(ruleText('outside_active_hours', 'block')).toBe('blocked');
    expect(ruleText('outside_active_hours', 'approve')).toBe('parked for approval');
  });
});

describe('changes of the rules', () => {
  const cur = policy();

  test('each rule set: old → new in words, and the patch carries it', () => {
    const next = { ...ruled, allowlist_labels: {} };
    expect(changesOf(cur, next)).toEqual([
      { kind: 'rule', field: 'approvals_required', name: 'Approvals needed', from: '1 person', to: '2 people' },
      { kind: 'rule', field: 'weekly_limit_usdc', name: 'Weekly limit', from: 'no limit', to: '300.00 USDC' },
      { kind: 'rule', field: 'monthly_limit_usdc', name: 'Monthly limit', from: 'no limit', to: '1,000.50 USDC' },
      { kind: 'rule', field: 'max_tx_per_hour', name: 'Payments per hour', from: 'no limit', to: '10 payments' },
      { kind: 'rule', field: 'max_tx_per_day', name: 'Payments per day', from: 'no limit', to: '0 payments' },
      { kind: 'rule', field: 'active_hours', name: 'Active hours', from: 'any time', to: 'Mon–Fri 09:00–18:00 (America/New_York)' },
      { kind: 'rule', field: 'outside_active_hours', name: 'Outside active hours', from: 'blocked', to: 'parked for approval' },
    ]);
    expect(patchOf(cur, next)).toEqual(RULES);
  });

  test('a rule removed is sent as null (the API removes it); what stays is not sent', () => {
    const next = { ...ruled, weekly_limit_usdc: null, max_tx_per_hour: null, active_hours: null, allowlist_labels: {} };
    expect(changesOf(ruled, next)).toEqual([
      { kind: 'rule', field: 'weekly_limit_usdc', name: 'Weekly limit', from: '300.00 USDC', to: 'no limit' },
      { kind: 'rule', field: 'max_tx_per_hour', name: 'Payments per hour', from: '10 payments', to: 'no limit' },
      { kind: 'rule', field: 'active_hours', name: 'Active hours', from: 'Mon–Fri 09:00–18:00 (America/New_York)', to: 'any time' },
    ]);
    expect(patchOf(ruled, next)).toEqual({ weekly_limit_usdc: null, max_tx_per_hour: null, active_hours: null });
  });

  test('the same hours in another order, or closing at 00:00 for 24:00, are no change; another day or zone is', () => {
    const h = { ...HOURS, to: '24:00' };
    const p = policy({ active_hours: h });
    expect(changesOf(p, policy({ active_hours: { ...h, days: ['fri', 'thu', 'wed', 'tue', 'mon'] } }))).toEqual([]);
    expect(changesOf(p, policy({ active_hours: { ...h, to: '00:00' } }))).toEqual([]);
    expect(changesOf(p, policy({ active_hours: { ...h, days: ['mon'] } }))).toEqual([
      {
        kind: 'rule',
        field: 'active_hours',
        name: 'Active hours',
        from: 'Mon–Fri 09:00–24:00 (America/New_York)',
        to: 'Mon 09:00–24:00 (America/New_York)',
      },
    ]);
    expect(changesOf(p, policy({ active_hours: { ...h, timezone: 'UTC' } }))).toHaveLength(1);
    const next = { ...policy({ active_hours: { ...h, from: '10:00' } }), allowlist_labels: {} };
    expect(patchOf(p, next)).toEqual({ active_hours: { ...h, from: '10:00' } });
  });

  test('an audit entry older than the rules reads as having none of them', () => {
    const old = { daily_limit_usdc: 100, max_tx_usdc: 20, approval_threshold_usdc: 10, allowlist: [] } as unknown as Policy;
    expect(changesOf(old, policy())).toEqual([]);
    expect(changesOf(old, policy({ max_tx_per_day: 5 }))).toEqual([
      { kind: 'rule', field: 'max_tx_per_day', name: 'Payments per day', from: 'no limit', to: '5 payments' },
    ]);
  });
});

test('inputOf (a create) sends the rules set and leaves out those not set', () => {
  const p = { ...policy({ approvals_required: 2, monthly_limit_usdc: 50, active_hours: HOURS }), allowlist_labels: {} };
  expect(inputOf(p)).toEqual({
    daily_limit_usdc: 100,
    max_tx_usdc: 20,
    approval_threshold_usdc: 10,
    allowlist: [],
    approvals_required: 2,
    monthly_limit_usdc: 50,
    active_hours: HOURS,
    outside_active_hours: 'block',
  });
});
