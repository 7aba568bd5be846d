import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { renderRoute } from '../test-render';
import { TxLinks } from './TxLinks';

test('the explorer (devnet), and the approval a payment came from', async () => {
  renderRoute('/t', <TxLinks t={{ signature: 'SIG', approvalId: 'ap_1' }} network="devnet" />);
  expect((await screen.findByRole('link', { name: 'Explorer' })).getAttribute('href')).toBe('https://explorer.solana.com/tx/SIG?cluster=devnet');
  expect(screen.getByRole('link', { name: 'Approval' }).getAttribute('href')).toBe('/approvals/ap_1');
});

test('no approval, no link to one', async () => {
  renderRoute('/t', <TxLinks t={{ signature: 'SIG', approvalId: null }} network="mainnet" />);
  expect((await screen.findByRole('link', { name: 'Explorer' })).getAttribute('href')).toBe('https://explorer.solana.com/tx/SIG');
  expect(screen.queryByRole('link', { name: 'Approval' })).toBeNull();
});
