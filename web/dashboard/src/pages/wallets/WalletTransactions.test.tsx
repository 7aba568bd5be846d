import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { session, transaction, wallet } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { WalletTransactions } from './WalletTransactions';

test('none yet: fund it first, or give an agent a key once funded', async () => {
  const { unmount } = renderRoute('/t', <WalletTransactions agent={wallet()} activity={{ txs: [], approvals: [] }} error="" session={session()} />);
  expect(await screen.findByText(/Fund it first/)).toBeTruthy();
  unmount();
  renderRoute(
    '/t',
    <WalletTransactions
      agent={wallet({ balance: { usdc: 5, sol: 1, assets: [] } })}
      activity={{ txs: [], approvals: [] }}
      error=""
      session={session()}
    />,
  );
  expect(await screen.findByText(/give one an agent key/)).toBeTruthy();
});

test('each payment with its amount, recipient, status and links', async () => {
  renderRoute(
    '/t',
    <WalletTransactions agent={wallet()} activity={{ txs: [transaction({ approval_id: 'ap_1' })], approvals: [] }} error="" session={session()} />,
  );
  const row = (await screen.findByRole('table', { name: 'Transactions of this wallet' })).querySelector('tbody tr')!;
  expect(row.textContent).toContain('1.50 USDC');
  expect(row.textContent).toContain('9WzD…AWWM');
  expect(row.textContent).toContain('confirmed');
  expect(row.textContent).toContain('Explorer · Approval');
});

test('a deposit comes in: + and from its sender; one a fork dropped says failed, without the +', async () => {
  renderRoute(
    '/t',
    <WalletTransactions
      agent={wallet()}
      activity={{
        txs: [
          transaction({ id: 't1', direction: 'receive', amount: 2.5 }),
          transaction({ id: 't2', direction: 'receive', amount: 1, status: 'failed' }),
        ],
        approvals: [],
      }}
      error=""
      session={session()}
    />,
  );
  const [received, dropped] = (await screen.findByRole('table', { name: 'Transactions of this wallet' })).querySelectorAll('tbody tr');
  expect([...received.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent)).toEqual(['+2.50 USDC', 'from 9WzD…AWWM', 'confirmed']);
  expect([...dropped.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent)).toEqual(['1.00 USDC', 'from 9WzD…AWWM', 'failed']);
});
