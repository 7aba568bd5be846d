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
    <WalletTransactions agent={wallet({ balance: { usdc: 5, sol: 1 } })} activity={{ txs: [], approvals: [] }} error="" session={session()} />,
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
