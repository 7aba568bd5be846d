import bs58 from 'bs58';
import { describe, expect, test } from 'vitest';
import type { Policy } from './api-wallets';
import {
  type Draft,
  DEFAULT_DRAFT,
  NO_RULES,
  amountProblem,
  changesOf,
  draftOf,
  inputOf,
  newEntry,
  patchOf,
  problemsOf,
  proposedOf,
} from './policy-draft';

const A = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const B = bs58.encode(new Uint8Array(32).fill(7));
const C = bs58.encode(new Uint8Array(32).fill(9));

const policy = (p: Partial<Policy> = {}): Policy => ({
  daily_limit_usdc: 100,
  max_tx_usdc: 20,
  approval_threshold_usdc: 10,
  allowlist: [],
  allowlist_labels: {},
  ...NO_RULES,
  ...p,
});
const draft = (d: Partial<Draft> = {}): Draft => ({ ...DEFAULT_DRAFT, ...d });

describe('amountProblem', () => {
  test.each([
    ['25', ''],
    ['2.5', ''],
    ['0', ''],
    [' 12 ', ''],
    ['0.000001', ''],
    ['999999999999.999', ''],
    ['', 'Enter an amount.'],
    ['   ', 'Enter an amount.'],
    ['12.', 'A number of USDC, like 25 or 2.5.'],
    ['.5', 'A number of USDC, like 25 or 2.5.'],
    ['-1', 'A number of USDC, like 25 or 2.5.'],
    ['1e3', 'A number of USDC, like 25 or 2.5.'],
    ['1,000', 'A number of USDC, like 25 or 2.5.'],
    ['ten', 'A number of USDC, like 25 or 2.5.'],
    ['1.1234567', 'At most 6 decimals.'],
    ['1234567890123456', 'Too many digits.'],
    ['1234567890.123456', 'Too many digits.'],
    ['1000000000001', 'Too large.'],
  ])('%j → %j', (s, want) => {
    expect(amountProblem(s)).toBe(want);
  });

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
    expect(p.fields).toEqual({ daily_limit_usdc: '', max_tx_usdc: '', approval_threshold_usdc: '' });
    expect(p.entries).toEqual([
      { address: '', label: '' },
      { address: '', label: '' },
    ]);
  });

  test('says which amount is wrong', () => {
    const p = problemsOf(draft({ max_tx_usdc: '12.', approval_threshold_usdc: '' }));
    expect(p.any).toBe(true);
    expect(p.fields).toEqual({ daily_limit_usdc: '', max_tx_usdc: 'A number of USDC, like 25 or 2.5.', approval_threshold_usdc: 'Enter an amount.' });
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
