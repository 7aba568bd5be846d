import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { approval } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { WalletApprovals } from './WalletApprovals';

test('each approval links to its page with its status', async () => {
  renderRoute('/t', <WalletApprovals activity={{ txs: [], approvals: [approval({ status: 'expired' })] }} error="" />);
  const link = await screen.findByRole('link', { name: '25.00 USDC to 9WzD…AWWM' });
  expect(link.getAttribute('href')).toBe('/approvals/ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5');
  expect(link.closest('li')!.textContent).toContain('expired');
});

test('none says where they come from', async () => {
  renderRoute('/t', <WalletApprovals activity={{ txs: [], approvals: [] }} error="" />);
  expect(await screen.findByText(/sends at or above its approval threshold wait here/)).toBeTruthy();
});
