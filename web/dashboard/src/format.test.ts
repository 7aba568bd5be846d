import { describe, expect, test } from 'vitest';
import { actor, ago, count, countdown, errorText, explorer, money, short, sol, solAmount, usdc, when } from './format';

describe('usdc', () => {
  test.each([
    [0, '0.00 USDC'],
    [25, '25.00 USDC'],
    [2.5, '2.50 USDC'],
    [1234.5, '1,234.50 USDC'],
    [0.000001, '0.000001 USDC'],
    [1234567.891234, '1,234,567.891234 USDC'],
  ])('%s → %s', (n, want) => {
    expect(usdc(n, 'en-US')).toBe(want);
  });
  test('in the reader’s locale', () => {
    expect(usdc(1234.5, 'de-DE')).toBe('1.234,50 USDC');
    expect(usdc(1234.5, 'fr-FR')).toBe('1\u202f234,50 USDC');
  });
});

describe('money', () => {
  test.each([
    [1.5, 'PYUSD', '1.50 PYUSD'],
    [20, 'EURC', '20.00 EURC'],
    [1234.5, 'USDC', '1,234.50 USDC'],
    [0.000001, 'USDT', '0.000001 USDT'],
    [0.25, 'SOL', '0.25 SOL'],
  ])('%s %s → %s', (n, asset, want) => {
    expect(money(n, asset, 'en-US')).toBe(want);
  });
});

test('ago says how far a time is, in words', () => {
  const now = Date.parse('2026-04-01T12:00:00Z');
  expect(ago('2026-04-01T11:55:00Z', now)).toBe('5 minutes ago');
  expect(ago('2026-04-01T14:00:00Z', now)).toBe('in about 2 hours');
  expect(ago('2026-03-29T12:00:00Z', now)).toBe('3 days ago');
});

describe('sol', () => {
  test.each([
    [0, '0 SOL'],
    [1, '0.000000001 SOL'],
    [5000, '0.000005 SOL'],
    [1_500_000_000, '1.5 SOL'],
    [2_000_000_000_000, '2,000 SOL'],
  ])('%s lamports → %s', (lamports, want) => {
    expect(sol(lamports, 'en-US')).toBe(want);
  });
});

test('counts and SOL amounts without a unit, for tables whose head names it, in the reader’s locale', () => {
  expect(count(1234, 'en-US')).toBe('1,234');
  expect(count(1234, 'de-DE')).toBe('1.234');
  expect(solAmount(0.000015, 'en-US')).toBe('0.000015');
  expect(solAmount(1234.5, 'de-DE')).toBe('1.234,5');
});

test('short keeps the ends of a long address and leaves a short one', () => {
  expect(short('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM')).toBe('9WzD…AWWM');
  expect(short('abcdefghijkl')).toBe('abcdefghijkl');
  expect(short('')).toBe('');
});

test('when shows a time in UTC to the minute, and a dash for none', () => {
  expect(when('2026-04-01T12:34:56Z')).toBe('1 Apr 2026, 12:34 UTC');
  expect(when('2026-04-01T23:30:00-02:00')).toBe('2 Apr 2026, 01:30 UTC');
  expect(when(null)).toBe('—');
  expect(when('')).toBe('—');
});

describe('countdown', () => {
  const now = Date.parse('2026-04-01T12:00:00Z');
  test.each([
    ['2026-04-01T12:00:00Z', 'expired'],
    ['2026-04-01T11:59:00Z', 'expired'],
    ['2026-04-01T12:00:59Z', '0 min'],
    ['2026-04-01T12:45:00Z', '45 min'],
    ['2026-04-01T13:05:00Z', '1 h 5 min'],
    ['2026-04-02T12:00:00Z', '1 d 0 h'],
    ['2026-04-03T15:59:00Z', '2 d 3 h'],
  ])('until %s → %s', (iso, want) => {
    expect(countdown(iso, now)).toBe(want);
  });
});

test('explorer links devnet with its cluster and mainnet without', () => {
  expect(explorer('sig', 'devnet')).toBe('https://explorer.solana.com/tx/sig?cluster=devnet');
  expect(explorer('sig', 'mainnet')).toBe('https://explorer.solana.com/tx/sig');
});

describe('actor', () => {
  test.each([
    [null, '—'],
    ['user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', 'user 9WzD…AWWM'],
    ['slack:U024BE7LH', 'Slack U024BE7LH'],
    ['key_0123456789abcdef', 'key 01234567…'],
    ['system', 'system'],
  ])('%s → %s', (a, want) => {
    expect(actor(a)).toBe(want);
  });
});

test('errorText is an error’s message, or the thrown value as text', () => {
  expect(errorText(new Error('request failed (502)'))).toBe('request failed (502)');
  expect(errorText('offline')).toBe('offline');
  expect(errorText(42)).toBe('42');
});
