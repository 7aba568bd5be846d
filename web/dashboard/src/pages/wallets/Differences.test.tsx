import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test } from 'vitest';
import type { BalanceDifferenceFromAPI } from '../../services/ledger';
import { ADDRESS, WALLET_ID } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { Differences } from './Differences';

const SIG = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

const outflow: BalanceDifferenceFromAPI = {
  id: 'd1',
  kind: 'unexplained_outflow',
  asset: 'USDC',
  amount: -4.5,
  at: '2026-04-02T08:00:00Z',
  slot: 123456,
  signature: SIG,
  to: ADDRESS,
  chain: null,
  ledger: null,
};
const snapshot: BalanceDifferenceFromAPI = {
  id: 'd2',
  kind: 'snapshot',
  asset: 'SOL',
  amount: -0.1,
  at: '2026-04-01T00:00:00Z',
  slot: 99,
  signature: null,
  to: null,
  chain: 0.4,
  ledger: 0.5,
};

const cells = (tr: HTMLElement) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent);

test('each difference in words, with its amount, details and link; more on request', async () => {
  const requests = recordedFetch((r) =>
    r.path.includes('cursor=')
      ? { status: 200, body: { wallet_id: WALLET_ID, items: [snapshot], next_cursor: null } }
      : { status: 200, body: { wallet_id: WALLET_ID, items: [outflow], next_cursor: 'c1' } },
  );
  renderRoute('/w', <Differences id={WALLET_ID} network="devnet" />);
  const table = await screen.findByRole('table', { name: "Differences of this wallet's balance" });
  const first = within(table).getAllByRole('row')[1];
  expect(cells(first)).toEqual([
    'Left in a transaction the service did not make',
    '-4.50 USDC',
    'to 9WzD…AWWM in 5VER…kQUW slot 123,456',
    'Explorer',
  ]);
  expect(within(first).getByRole('link', { name: 'Explorer' }).getAttribute('href')).toBe(`https://explorer.solana.com/tx/${SIG}?cluster=devnet`);
  expect(within(first).getByTitle(SIG)).toBeTruthy();

  await userEvent.setup().click(screen.getByRole('button', { name: 'More differences' }));
  await screen.findByText('Chain differs from ledger at the daily snapshot');
  const second = within(table).getAllByRole('row')[2];
  expect(cells(second)).toEqual(['Chain differs from ledger at the daily snapshot', '-0.1 SOL', 'chain 0.4 SOL, ledger 0.5 SOL slot 99', '']);
  expect(screen.queryByRole('button', { name: 'More differences' })).toBeNull();
  expect(requests.map((r) => r.path)).toEqual([
    `/api/public/v1/wallets/${WALLET_ID}/balance/differences?limit=50`,
    `/api/public/v1/wallets/${WALLET_ID}/balance/differences?limit=50&cursor=c1`,
  ]);
});

test('none: every change is explained; a list that cannot load says why', async () => {
  recordedFetch(() => ({ status: 200, body: { wallet_id: WALLET_ID, items: [], next_cursor: null } }));
  const { unmount } = renderRoute('/w', <Differences id={WALLET_ID} network="devnet" />);
  expect(await screen.findByText('None: every change of this wallet’s balance is explained.')).toBeTruthy();
  unmount();
  recordedFetch(() => ({ status: 403, body: { error: 'forbidden' } }));
  renderRoute('/w', <Differences id={WALLET_ID} network="devnet" />);
  expect(await screen.findByText('Could not load the differences: forbidden')).toBeTruthy();
});
