// The analytics charts' configurations (what Chart.js is asked to draw) from
// an API report, their colours from the page's CSS custom properties, and
// the formatters beside them.
import { afterEach, describe, expect, test } from 'vitest';
import type { Analytics } from './services/analytics';
import { approvalsChart, balanceChart, blockedChart, colourOf, days, duration, receivedChart, spendChart, themeOf, tick, type Theme } from './charts';

const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';

const report: Analytics = {
  from: '2026-04-01',
  to: '2026-04-04',
  received: [],
  wallets: [
    { id: A, label: 'research-bot', daily_limit_usdc: 100 },
    { id: B, label: 'support-agent', daily_limit_usdc: 40 },
  ],
  spend: [
    {
      day: '2026-04-01',
      wallet_id: A,
      amount_usdc: 12.5,
      amount_eur: 0,
      transactions: 2,
      x402_payments: 0,
      x402_amount_usdc: 0,
      mpp_payments: 0,
      mpp_amount_usdc: 0,
      fee_lamports: 10000,
    },
    {
      day: '2026-04-01',
      wallet_id: B,
      amount_usdc: 4.2,
      amount_eur: 0,
      transactions: 1,
      x402_payments: 0,
      x402_amount_usdc: 0,
      mpp_payments: 0,
      mpp_amount_usdc: 0,
      fee_lamports: 5000,
    },
    {
      day: '2026-04-03',
      wallet_id: A,
      amount_usdc: 30,
      amount_eur: 0,
      transactions: 1,
      x402_payments: 1,
      x402_amount_usdc: 0.01,
      mpp_payments: 0,
      mpp_amount_usdc: 0,
      fee_lamports: 5000,
    },
  ],
  approvals: [
    { day: '2026-04-01', approved: 2, rejected: 1, expired: 0, median_decision_seconds: 120 },
    { day: '2026-04-04', approved: 0, rejected: 0, expired: 3, median_decision_seconds: null },
  ],
  median_decision_seconds: 120,
  blocked: [
    { reason: 'exceeds_max_tx', count: 4 },
    { reason: 'recipient_not_allowed', count: 1 },
  ],
};

const theme: Theme = {
  series: ['#111111', '#222222', '#333333'],
  approved: '#00aa00',
  rejected: '#aa0000',
  expired: '#888888',
  blocked: '#cc0000',
  text: '#010101',
  grid: '#dddddd',
  font: 'system-ui',
};

test('days lists every UTC day of the range, both ends included', () => {
  expect(days('2026-04-01', '2026-04-04')).toEqual(['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04']);
  expect(days('2026-02-28', '2026-03-01')).toEqual(['2026-02-28', '2026-03-01']);
  expect(days('2026-12-31', '2027-01-01')).toEqual(['2026-12-31', '2027-01-01']);
  expect(days('2026-04-01', '2026-04-01')).toEqual(['2026-04-01']);
  expect(days('2026-04-02', '2026-04-01')).toEqual([]);
});

describe('duration', () => {
  test.each([
    [null, '—'],
    [0, '0 s'],
    [44.6, '45 s'],
    [89, '89 s'],
    [90, '2 min'],
    [5399, '90 min'],
    [5400, '1.5 h'],
    [86400, '24.0 h'],
  ])('%s s → %s', (s, want) => {
    expect(duration(s)).toBe(want);
  });
});

test('spend: a stack per day of each wallet’s spend (gaps on quiet days), and each wallet’s limit as its own dashed line', () => {
  const c = spendChart(report, theme);
  expect(c.data.labels).toEqual(['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04']);
  const sets = c.data.datasets.map((d) => ({ type: d.type, label: d.label, data: d.data, colour: d.backgroundColor, stack: d.stack }));
  expect(sets).toEqual([
    { type: 'bar', label: 'research-bot', data: [12.5, null, 30, null], colour: '#111111', stack: 'spend' },
    { type: 'bar', label: 'support-agent', data: [4.2, null, null, null], colour: '#222222', stack: 'spend' },
    { type: 'line', label: 'research-bot daily limit', data: [100, 100, 100, 100], colour: '#111111', stack: `limit ${A}` },
    { type: 'line', label: 'support-agent daily limit', data: [40, 40, 40, 40], colour: '#222222', stack: `limit ${B}` },
  ]);
  const scales = c.options?.scales as Record<string, { stacked?: boolean; ticks?: { color?: string }; grid?: { color?: string } }>;
  expect(scales.x.stacked && scales.y.stacked).toBe(true);
  expect([scales.x.ticks?.color, scales.x.grid?.color]).toEqual(['#010101', '#dddddd']);
  expect(c.options?.plugins?.legend?.labels?.color).toBe('#010101');
  expect(c.options?.animation).toBe(false);
});

test('spend: the tooltip says each amount in USDC and leaves out wallets that sent nothing that day', () => {
  const tooltip = spendChart(report, theme).options?.plugins?.tooltip;
  const item = (label: string, raw: number | null) => ({ raw, dataset: { label } }) as never;
  expect(tooltip?.filter?.call(null as never, item('research-bot', null), 0, [], null as never)).toBe(false);
  expect(tooltip?.filter?.call(null as never, item('research-bot', 12.5), 0, [], null as never)).toBe(true);
  const label = tooltip?.callbacks?.label as unknown as (i: unknown) => string;
  expect(label(item('research-bot', 1234.5))).toBe('research-bot: 1,234.50 USDC');
});

test('approvals: a stack per day by outcome, zero on days without decisions, in the outcome colours', () => {
  const c = approvalsChart(report, theme);
  expect(c.data.labels).toEqual(['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04']);
  expect(c.data.datasets.map((d) => [d.label, d.data, d.backgroundColor])).toEqual([
    ['Approved', [2, 0, 0, 0], '#00aa00'],
    ['Rejected', [1, 0, 0, 0], '#aa0000'],
    ['Expired', [0, 0, 0, 3], '#888888'],
  ]);
});

test('blocked: a horizontal bar per rule, most first', () => {
  const c = blockedChart(report, theme);
  expect(c.options?.indexAxis).toBe('y');
  expect(c.data.labels).toEqual(['exceeds_max_tx', 'recipient_not_allowed']);
  expect(c.data.datasets.map((d) => [d.data, d.backgroundColor])).toEqual([[[4, 1], '#cc0000']]);
  expect(c.options?.plugins?.legend?.display).toBe(false);
});

test('each wallet keeps its colour, the series repeating past the last', () => {
  const many = {
    ...report,
    wallets: [...report.wallets, { id: 'c', label: 'c', daily_limit_usdc: 1 }, { id: 'd', label: 'd', daily_limit_usdc: 1 }],
  };
  expect([...colourOf(many, theme).values()]).toEqual(['#111111', '#222222', '#333333', '#111111']);
});

describe('themeOf', () => {
  afterEach(() => {
    document.head.querySelector('style')?.remove();
  });

  test('without custom properties: the light or dark fallbacks, the text in the element’s colour', () => {
    const el = document.createElement('div');
    el.style.color = 'rgb(27, 31, 36)';
    document.body.append(el);
    const light = themeOf(el, false);
    const dark = themeOf(el, true);
    expect(light.series[0]).toBe('#0b57d0');
    expect(dark.series[0]).toBe('#8ab4f8');
    expect(light.approved).not.toBe(dark.approved);
    expect(light.text).toBe('rgb(27, 31, 36)');
    expect(light.grid).toBe('rgba(0, 0, 0, 0.1)');
    expect(dark.grid).toBe('rgba(255, 255, 255, 0.14)');
    el.remove();
  });

  test('the page’s custom properties win: a theme (dark mode among them) colours the charts', () => {
    const style = document.createElement('style');
    // On the chart's box: happy-dom does not inherit custom properties (browsers do, from :root).
    style.textContent = '.chart { --chart-1: #abcdef; --chart-approved: rgb(1, 2, 3); --chart-text: #fafafa; --chart-grid: #444444 }';
    document.head.append(style);
    const el = document.createElement('div');
    el.className = 'chart';
    document.body.append(el);
    const t = themeOf(el, true);
    expect(t.series[0]).toBe('#abcdef');
    expect(t.series[1]).toBe('#81c995');
    expect(t.approved).toBe('rgb(1, 2, 3)');
    expect(t.text).toBe('#fafafa');
    expect(t.grid).toBe('#444444');
    el.remove();
  });
});

test('received: the USDC that came in each day, every wallet together, zero on quiet days; other assets and SOL only in the table', () => {
  const c = receivedChart(
    {
      ...report,
      received: [
        { day: '2026-04-01', wallet_id: A, asset: 'USDC', amount: 25, deposits: 1 },
        { day: '2026-04-01', wallet_id: B, asset: 'USDC', amount: 5.5, deposits: 2 },
        { day: '2026-04-02', wallet_id: B, asset: 'EURC', amount: 7, deposits: 1 },
        { day: '2026-04-03', wallet_id: A, asset: 'SOL', amount: 1, deposits: 1 },
      ],
    },
    theme,
  );
  expect(c.data.labels).toEqual(['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04']);
  expect(c.data.datasets.map((d) => [d.label, d.data, d.backgroundColor])).toEqual([['Received', [30.5, 0, 0, 0], '#222222']]);
  const label = c.options?.plugins?.tooltip?.callbacks?.label as unknown as (i: unknown) => string;
  expect(label({ raw: 30.5 })).toBe('Received: 30.50 USDC');
});

const at = (iso: string) => new Date(iso);
const series = (asset: string, amounts: number[], decimals = 6) => ({
  asset,
  decimals,
  points: amounts.map((amount, i) => ({ at: at(`2026-04-0${i + 1}T13:47:00Z`), amount })),
});

test('balance of one asset: its line alone on an axis titled with it, from zero, no legend, a tick per point in UTC', () => {
  const c = balanceChart({ interval: 'day', series: [series('EURC', [0, 12.5, 10])] }, theme);
  expect(c.type).toBe('line');
  expect(c.data.labels).toEqual(['04-01', '04-02', '04-03']);
  expect(c.data.datasets.map((d) => [d.label, d.data, d.yAxisID, d.borderColor, d.borderDash])).toEqual([
    ['EURC', [0, 12.5, 10], 'y', '#111111', undefined],
  ]);
  const scales = c.options?.scales as Record<string, { beginAtZero?: boolean; title?: { text?: string } } | undefined>;
  expect([scales.y?.beginAtZero, scales.y?.title?.text, scales.sol]).toEqual([true, 'EURC', undefined]);
  expect(c.options?.plugins?.legend?.display).toBe(false);
  const callbacks = c.options?.plugins?.tooltip?.callbacks as unknown as { title: (i: unknown[]) => string; label: (i: unknown) => string };
  expect(callbacks.title([{ dataIndex: 1 }])).toBe('2 Apr 2026, 13:47 UTC');
  expect(callbacks.label({ raw: 12.5, dataset: { label: 'EURC' } })).toBe('12.50 EURC');
});

test('balance of every asset: a line each in its colour, the stablecoins on the left axis, SOL dashed on the right, with a legend', () => {
  const c = balanceChart(
    { interval: 'day', series: [series('USDC', [0, 25, 20.5]), series('EURC', [0, 0, 7]), series('SOL', [0, 0.5, 0.49], 9)] },
    theme,
  );
  expect(c.data.datasets.map((d) => [d.label, d.data, d.yAxisID, d.borderColor, d.borderDash])).toEqual([
    ['USDC', [0, 25, 20.5], 'y', '#111111', undefined],
    ['EURC', [0, 0, 7], 'y', '#222222', undefined],
    ['SOL', [0, 0.5, 0.49], 'sol', '#333333', [5, 4]],
  ]);
  const scales = c.options?.scales as Record<string, { beginAtZero?: boolean; position?: string; title?: { text?: string } }>;
  expect([scales.y.beginAtZero, scales.y.title?.text]).toEqual([true, 'Stablecoins']);
  expect([scales.sol.beginAtZero, scales.sol.position, scales.sol.title?.text]).toEqual([true, 'right', 'SOL']);
  expect(c.options?.plugins?.legend?.display).toBe(true);
  const callbacks = c.options?.plugins?.tooltip?.callbacks as unknown as { label: (i: unknown) => string };
  expect(callbacks.label({ raw: 25, dataset: { label: 'USDC' } })).toBe('25.00 USDC');
  expect(callbacks.label({ raw: 0.49, dataset: { label: 'SOL' } })).toBe('0.49 SOL');
});

test('a tick of an hourly balance is its hour and minute in UTC', () => {
  expect(tick(at('2026-04-02T13:47:00Z'), 'hour')).toBe('13:47');
});
