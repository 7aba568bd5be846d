// The analytics page: each chart beside a table of the API's numbers, the
// empty states, and the range in the URL. What the charts are asked to
// draw is in charts.test.ts; the browser test (test/dashboard.test.mjs)
// checks that they are painted.
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, onTestFinished, test, vi } from 'vitest';
import type { Analytics } from '../../services/analytics';
import { recordedFetch, renderRoute } from '../../test-render';
import { AnalyticsPage } from './AnalyticsPage';

const A = 'a0000000-0000-4000-8000-000000000001';

function report(r: Partial<Analytics> = {}): Analytics {
  return {
    from: '2026-04-01',
    to: '2026-04-30',
    received: [{ day: '2026-04-03', wallet_id: A, asset: 'USDC', amount: 25, deposits: 1 }],
    wallets: [{ id: A, label: 'research-bot', daily_limit_usdc: 100 }],
    spend: [
      {
        day: '2026-04-02',
        wallet_id: A,
        amount_usdc: 12.5,
        amount_eur: 0,
        transactions: 3,
        x402_payments: 1,
        x402_amount_usdc: 0.01,
        mpp_payments: 1,
        mpp_amount_usdc: 0.05,
        fee_lamports: 10000,
      },
    ],
    approvals: [{ day: '2026-04-02', approved: 2, rejected: 1, expired: 0, median_decision_seconds: 75 }],
    median_decision_seconds: 150,
    blocked: [{ reason: 'exceeds_max_tx', count: 3 }],
    ...r,
  };
}

const rows = (name: string) =>
  within(screen.getByRole('table', { name }))
    .getAllByRole('row')
    .slice(1)
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim()));

/** quiet expects Chart.js to say it has no 2D canvas (happy-dom has none) and draw nothing, and nothing else to be logged. */
function quiet() {
  const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => {
    for (const [m] of logged.mock.calls) expect(m).toBe("Failed to create chart: can't acquire context from the given item");
  });
}

test('each chart has its name and, beside it, the table of its numbers', async () => {
  quiet();
  const requests = recordedFetch(() => ({ status: 200, body: report() }));
  renderRoute('/analytics', <AnalyticsPage />);
  await screen.findByRole('table', { name: 'Spend per day' });
  expect(requests.map((r) => r.path)).toEqual(['/api/public/v1/analytics?']);
  expect(screen.getByRole('heading', { name: 'Spend per day, 2026-04-01 to 2026-04-30 (UTC)' })).toBeTruthy();
  for (const name of ['Spend per day, stacked by wallet', 'USDC received per day', 'Approvals per day by outcome', 'Blocked sends by rule']) {
    expect(screen.getByRole('img', { name }).tagName).toBe('CANVAS');
  }
  expect(rows('Spend per day')).toEqual([['2026-04-02', 'research-bot', '12.50', '3', '1 · 0.01 USDC', '1 · 0.05 USDC', '0.00001', '100.00']]);
  expect(rows('Received per day')).toEqual([['2026-04-03', 'research-bot', '25.00 USDC', '1']]);
  expect(rows('Approvals per day')).toEqual([['2026-04-02', '2', '1', '0', '75 s']]);
  expect(rows('Blocked sends by rule')).toEqual([['exceeds_max_tx', '3']]);
  expect(screen.getByTestId('median').textContent).toBe('3 min');
  // The form shows the range the API answered for.
  expect((screen.getByLabelText('From') as HTMLInputElement).value).toBe('2026-04-01');
  expect((screen.getByLabelText('To') as HTMLInputElement).value).toBe('2026-04-30');
  expect(document.querySelectorAll('svg, rect, path, polyline')).toHaveLength(0);
});

test('a day’s x402 and MPP purchases are counted apart, each a dash on a day without any', async () => {
  quiet();
  const day = report().spend[0];
  recordedFetch(() => ({
    status: 200,
    body: report({
      spend: [
        { ...day, day: '2026-04-02', transactions: 4, x402_payments: 0, x402_amount_usdc: 0, mpp_payments: 3, mpp_amount_usdc: 0.3 },
        { ...day, day: '2026-04-03', transactions: 1, x402_payments: 0, x402_amount_usdc: 0, mpp_payments: 0, mpp_amount_usdc: 0 },
      ],
    }),
  }));
  renderRoute('/analytics', <AnalyticsPage />);
  const table = await screen.findByRole('table', { name: 'Spend per day' });
  expect(within(table).getByRole('columnheader', { name: 'Of which MPP' })).toBeTruthy();
  expect(screen.getAllByTestId('x402').map((td) => td.textContent)).toEqual(['—', '—']);
  expect(screen.getAllByTestId('mpp').map((td) => td.textContent)).toEqual(['3 · 0.30 USDC', '—']);
});

test('a quiet range says so instead of empty charts', async () => {
  recordedFetch(() => ({
    status: 200,
    body: report({ spend: [], wallets: [], received: [], approvals: [], blocked: [], median_decision_seconds: null }),
  }));
  renderRoute('/analytics', <AnalyticsPage />);
  expect(await screen.findByText('No sends in this range.')).toBeTruthy();
  expect(screen.getByText('Nothing received in this range.')).toBeTruthy();
  expect(screen.getByText('No approvals decided in this range.')).toBeTruthy();
  expect(screen.getByText('No sends blocked in this range.')).toBeTruthy();
  expect(screen.getByTestId('median').textContent).toBe('—');
  expect(screen.queryByRole('img')).toBeNull();
});

test('a wallet that only received is named from the wallets’ list, read only then; each deposit in its asset, SOL in SOL', async () => {
  quiet();
  const B = 'b0000000-0000-4000-8000-000000000002';
  const requests = recordedFetch((r) =>
    r.path.startsWith('/api/public/v1/agents')
      ? { status: 200, body: { agents: [{ id: B, label: 'treasury' }], next_cursor: null } }
      : {
          status: 200,
          body: report({
            received: [
              { day: '2026-04-03', wallet_id: B, asset: 'SOL', amount: 0.25, deposits: 1 },
              { day: '2026-04-03', wallet_id: 'c0000000-0000-4000-8000-000000000003', asset: 'USDC', amount: 3, deposits: 2 },
              { day: '2026-04-03', wallet_id: 'c0000000-0000-4000-8000-000000000003', asset: 'EURC', amount: 12.5, deposits: 1 },
            ],
          }),
        },
  );
  renderRoute('/analytics', <AnalyticsPage />);
  await screen.findByText('treasury');
  expect(rows('Received per day')).toEqual([
    ['2026-04-03', 'treasury', '0.25 SOL', '1'],
    ['2026-04-03', 'c000…0003', '3.00 USDC', '2'],
    ['2026-04-03', 'c000…0003', '12.50 EURC', '1'],
  ]);
  expect(requests.map((r) => r.path)).toEqual(['/api/public/v1/analytics?', '/api/public/v1/agents?limit=100']);
});

test('another range is asked for, and put in the URL', async () => {
  quiet();
  const requests = recordedFetch((r) => {
    const q = new URL(r.path, 'http://x').searchParams;
    return { status: 200, body: report({ from: q.get('from') || '2026-04-01', to: q.get('to') || '2026-04-30' }) };
  });
  const { router } = renderRoute('/analytics', <AnalyticsPage />);
  const user = userEvent.setup();
  await screen.findByRole('table', { name: 'Spend per day' });
  const from = screen.getByLabelText('From') as HTMLInputElement;
  await user.clear(from);
  await user.type(from, '2026-04-10');
  await user.click(screen.getByRole('button', { name: 'Show' }));
  expect(await screen.findByRole('heading', { name: 'Spend per day, 2026-04-10 to 2026-04-30 (UTC)' })).toBeTruthy();
  expect(requests.map((r) => r.path)).toEqual(['/api/public/v1/analytics?', '/api/public/v1/analytics?from=2026-04-10&to=2026-04-30']);
  expect(router.state.location.search).toEqual({ from: '2026-04-10', to: '2026-04-30' });
});

test('a report that cannot load says why', async () => {
  recordedFetch(() => ({ status: 422, body: { error: 'from is after to' } }));
  renderRoute('/analytics', <AnalyticsPage />);
  expect(await screen.findByText('Could not load analytics: from is after to')).toBeTruthy();
});
