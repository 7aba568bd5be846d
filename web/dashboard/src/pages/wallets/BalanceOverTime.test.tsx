import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, onTestFinished, test, vi } from 'vitest';
import { WALLET_ID } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { BalanceOverTime } from './BalanceOverTime';

const point = (at: string, usdc: number, sol: number) => ({ at, usdc, sol });

/** quiet expects Chart.js to say it has no 2D canvas (happy-dom has none), and nothing else to be logged. */
function quiet() {
  const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => {
    for (const [m] of logged.mock.calls) expect(m).toBe("Failed to create chart: can't acquire context from the given item");
  });
}

const rows = () =>
  within(screen.getByRole('table', { name: 'Balance at each point, newest first' }))
    .getAllByRole('row')
    .slice(1)
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));

test('the last 30 days by day: the chart, and the table of its points newest first; 48 hours by hour on request', async () => {
  quiet();
  const requests = recordedFetch((r) => {
    const hourly = r.path.includes('interval=hour');
    return {
      status: 200,
      body: {
        wallet_id: WALLET_ID,
        points: hourly
          ? [point('2026-04-03T12:00:00Z', 25, 0.5), point('2026-04-03T13:00:00Z', 20.5, 0.49)]
          : [point('2026-04-01T13:47:00Z', 0, 0), point('2026-04-02T13:47:00Z', 25, 0.5)],
      },
    };
  });
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} />);
  await screen.findByRole('table', { name: 'Balance at each point, newest first' });
  expect(screen.getByRole('img', { name: 'USDC and SOL of this wallet, a point a day' }).tagName).toBe('CANVAS');
  expect(rows()).toEqual([
    ['2 Apr 2026, 13:47', '25.00', '0.5'],
    ['1 Apr 2026, 13:47', '0.00', '0'],
  ]);
  expect(screen.getByRole('button', { name: 'Last 30 days' }).getAttribute('aria-pressed')).toBe('true');

  await userEvent.setup().click(screen.getByRole('button', { name: 'Last 48 hours' }));
  expect(await screen.findByText('3 Apr 2026, 13:00')).toBeTruthy();
  expect(screen.getByRole('img', { name: 'USDC and SOL of this wallet, a point an hour' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Last 48 hours' }).getAttribute('aria-pressed')).toBe('true');
  expect(requests.map((r) => new URL(r.path, 'http://x').pathname)).toEqual([
    `/api/public/v1/wallets/${WALLET_ID}/balance/history`,
    `/api/public/v1/wallets/${WALLET_ID}/balance/history`,
  ]);
  expect(requests[0].path).toMatch(/\?interval=day$/);
  // From 48 hours ago; the server's now is the end.
  const from = Date.parse(new URL(requests[1].path, 'http://x').searchParams.get('from')!);
  expect(Math.abs(Date.now() - 48 * 3600_000 - from)).toBeLessThan(60_000);
});

test('a ledger with nothing yet says so instead of a flat chart', async () => {
  recordedFetch(() => ({ status: 200, body: { wallet_id: WALLET_ID, points: [point('2026-04-01T13:47:00Z', 0, 0)] } }));
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} />);
  expect(await screen.findByText('Nothing in the ledger yet.')).toBeTruthy();
  expect(screen.queryByRole('img')).toBeNull();
  expect(screen.queryByRole('table')).toBeNull();
});

test('a history that cannot load says why', async () => {
  recordedFetch(() => ({ status: 404, body: { error: 'wallet not found' } }));
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} />);
  expect(await screen.findByText('Could not load the balance over time: wallet not found')).toBeTruthy();
});
