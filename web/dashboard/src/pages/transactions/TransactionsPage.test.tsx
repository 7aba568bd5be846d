// The transactions page: each payment's row, and what a purchase bought.
// The browser walk (test/walk.test.mjs) lists a real x402 purchase.
import { screen, within } from '@testing-library/react';
import { expect, test } from 'vitest';
import { WALLET_ID, session, transactionFromAPI } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { TransactionsPage } from './TransactionsPage';

const SELLER = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';

/** theAPI answers the wallets' names and one page of these transactions. */
function theAPI(transactions: ReturnType<typeof transactionFromAPI>[]) {
  return recordedFetch((r) =>
    r.path.startsWith('/api/public/v1/agents')
      ? { status: 200, body: { agents: [{ id: WALLET_ID, label: 'research-bot' }], next_cursor: null } }
      : { status: 200, body: { transactions, next_cursor: null } },
  );
}

const rowOf = async (id: string) =>
  (await screen.findByRole('table', { name: 'Transactions' })).querySelector(`tr[data-signature="${id}"]`) as HTMLElement;

test('an x402 purchase and an MPP charge each say their protocol and what they bought; a send says neither', async () => {
  theAPI([
    transactionFromAPI({ id: 't3', signature: 'S3', kind: 'mpp', amount: 0.05, counterparty: SELLER, resource: 'https://seller.example/forecast' }),
    transactionFromAPI({ id: 't2', signature: 'S2', kind: 'x402', amount: 0.01, counterparty: SELLER, resource: 'https://seller.example/weather' }),
    transactionFromAPI({ id: 't1', signature: 'S1' }),
  ]);
  renderRoute('/transactions', <TransactionsPage session={session()} />);
  const mpp = await rowOf('S3');
  expect(within(mpp).getByTestId('mpp-resource').textContent).toBe('MPP · https://seller.example/forecast');
  expect(mpp.textContent).toContain('0.05 USDC');
  expect(within(await rowOf('S2')).getByTestId('x402-resource').textContent).toBe('x402 · https://seller.example/weather');
  const send = await rowOf('S1');
  expect(within(send).queryByTestId('mpp-resource')).toBeNull();
  expect(within(send).queryByTestId('x402-resource')).toBeNull();
});

test('a purchase whose resource is not known says it paid for one', async () => {
  theAPI([transactionFromAPI({ signature: 'S1', kind: 'mpp' })]);
  renderRoute('/transactions', <TransactionsPage session={session()} />);
  expect(within(await rowOf('S1')).getByTestId('mpp-resource').textContent).toBe('MPP · a paid resource');
});

test('a deposit below the minimum says so; one at it does not', async () => {
  theAPI([
    transactionFromAPI({ id: 't2', signature: 'S2', direction: 'receive', amount: 0.000001, below_minimum: true }),
    transactionFromAPI({ id: 't1', signature: 'S1', direction: 'receive', amount: 2 }),
  ]);
  renderRoute('/transactions', <TransactionsPage session={session()} />);
  expect(within(await rowOf('S2')).getByTestId('below-minimum').textContent).toBe('below minimum');
  expect(within(await rowOf('S1')).queryByTestId('below-minimum')).toBeNull();
});
