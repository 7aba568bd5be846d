import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, onTestFinished, test, vi } from 'vitest';
import { WALLET_ID } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { BalanceOverTime } from './BalanceOverTime';

const ASSETS = ['USDC', 'PYUSD', 'EURC', 'SOL'];

/** series is an asset's points as the API sends them: [instant, amount] each. */
const series = (asset: string, points: [string, number][]) => ({
  asset,
  decimals: asset === 'SOL' ? 9 : 6,
  points: points.map(([at, amount]) => ({ at, asset, amount })),
});

/** quiet expects Chart.js to say it has no 2D canvas (happy-dom has none), and nothing else to be logged. */
function quiet() {
  const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
  onTestFinished(() => {
    for (const [m] of logged.mock.calls) expect(m).toBe("Failed to create chart: can't acquire context from the given item");
  });
}

const table = (what: string) => screen.findByRole('table', { name: `Balance of ${what} at each point, newest first` });

const rows = (t: HTMLElement) =>
  within(t)
    .getAllByRole('row')
    .map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent));

const DAYS = ['2026-04-01T13:47:00Z', '2026-04-02T13:47:00Z'];

test('USDC over the last 30 days by day: the chart, and the table of its points newest first; 48 hours by hour on request', async () => {
  quiet();
  const requests = recordedFetch((r) => {
    const hourly = r.path.includes('interval=hour');
    return {
      status: 200,
      body: {
        wallet_id: WALLET_ID,
        series: [
          hourly
            ? series('USDC', [
                ['2026-04-03T12:00:00Z', 25],
                ['2026-04-03T13:00:00Z', 20.5],
              ])
            : series('USDC', [
                [DAYS[0], 0],
                [DAYS[1], 25],
              ]),
        ],
      },
    };
  });
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} assets={ASSETS} />);
  expect(rows(await table('USDC'))).toEqual([
    ['At (UTC)', 'USDC'],
    ['2 Apr 2026, 13:47', '25.00'],
    ['1 Apr 2026, 13:47', '0.00'],
  ]);
  expect(screen.getByRole('img', { name: 'USDC of this wallet, a point a day' }).tagName).toBe('CANVAS');
  expect((screen.getByLabelText('Asset') as HTMLSelectElement).value).toBe('USDC');
  expect(screen.getByRole('button', { name: 'Last 30 days' }).getAttribute('aria-pressed')).toBe('true');

  await userEvent.setup().click(screen.getByRole('button', { name: 'Last 48 hours' }));
  expect(await screen.findByText('3 Apr 2026, 13:00')).toBeTruthy();
  expect(screen.getByRole('img', { name: 'USDC of this wallet, a point an hour' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Last 48 hours' }).getAttribute('aria-pressed')).toBe('true');
  expect(requests.map((r) => new URL(r.path, 'http://x').pathname)).toEqual([
    `/api/public/v1/wallets/${WALLET_ID}/balance/history`,
    `/api/public/v1/wallets/${WALLET_ID}/balance/history`,
  ]);
  expect(requests[0].path).toMatch(/\?asset=USDC&interval=day$/);
  // From 48 hours ago; the server's now is the end.
  const from = Date.parse(new URL(requests[1].path, 'http://x').searchParams.get('from')!);
  expect(Math.abs(Date.now() - 48 * 3600_000 - from)).toBeLessThan(60_000);
});

test('another asset picked: its own history is asked and shown, in its units; every asset is a column each', async () => {
  quiet();
  const requests = recordedFetch((r) => {
    const asset = new URL(r.path, 'http://x').searchParams.get('asset');
    const of = {
      USDC: series('USDC', [
        [DAYS[0], 5],
        [DAYS[1], 5],
      ]),
      EURC: series('EURC', [
        [DAYS[0], 0],
        [DAYS[1], 12.5],
      ]),
      SOL: series('SOL', [
        [DAYS[0], 0.5],
        [DAYS[1], 0.499995],
      ]),
    };
    return { status: 200, body: { wallet_id: WALLET_ID, series: asset === 'all' ? [of.USDC, of.EURC, of.SOL] : [of[asset as keyof typeof of]] } };
  });
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} assets={ASSETS} />);
  await table('USDC');
  const user = userEvent.setup();
  const pick = screen.getByLabelText('Asset');
  expect(
    within(pick)
      .getAllByRole('option')
      .map((o) => o.textContent),
  ).toEqual(['USDC', 'PYUSD', 'EURC', 'SOL', 'Every asset']);

  await user.selectOptions(pick, 'EURC');
  expect(rows(await table('EURC'))).toEqual([
    ['At (UTC)', 'EURC'],
    ['2 Apr 2026, 13:47', '12.50'],
    ['1 Apr 2026, 13:47', '0.00'],
  ]);
  expect(screen.getByRole('img', { name: 'EURC of this wallet, a point a day' })).toBeTruthy();

  await user.selectOptions(pick, 'SOL');
  expect(rows(await table('SOL')).slice(1)).toEqual([
    ['2 Apr 2026, 13:47', '0.499995'],
    ['1 Apr 2026, 13:47', '0.5'],
  ]);

  await user.selectOptions(pick, 'Every asset');
  expect(rows(await table('every asset'))).toEqual([
    ['At (UTC)', 'USDC', 'EURC', 'SOL'],
    ['2 Apr 2026, 13:47', '5.00', '12.50', '0.499995'],
    ['1 Apr 2026, 13:47', '5.00', '0.00', '0.5'],
  ]);
  expect(screen.getByRole('img', { name: 'Every asset of this wallet, a point a day' })).toBeTruthy();
  expect(requests.map((r) => new URL(r.path, 'http://x').searchParams.get('asset'))).toEqual(['USDC', 'EURC', 'SOL', 'all']);
});

test('an asset with nothing in the ledger yet says so instead of a flat chart', async () => {
  recordedFetch(() => ({ status: 200, body: { wallet_id: WALLET_ID, series: [series('USDC', [[DAYS[0], 0]])] } }));
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} assets={ASSETS} />);
  expect(await screen.findByText('Nothing in the ledger yet.')).toBeTruthy();
  expect(screen.getByText(/Each change of this wallet’s USDC is recorded/)).toBeTruthy();
  expect(screen.queryByRole('img')).toBeNull();
  expect(screen.queryByRole('table')).toBeNull();
});

test('a history that cannot load says why', async () => {
  recordedFetch(() => ({ status: 404, body: { error: 'wallet not found' } }));
  renderRoute('/w', <BalanceOverTime id={WALLET_ID} assets={ASSETS} />);
  expect(await screen.findByText('Could not load the balance over time: wallet not found')).toBeTruthy();
});
