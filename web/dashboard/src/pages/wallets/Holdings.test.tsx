import { render, screen, within } from '@testing-library/react';
import { expect, test } from 'vitest';
import { Holdings, holdingsOf } from './Holdings';

const balance = {
  usdc: 485.3,
  sol: 0.999995,
  assets: [
    { symbol: 'USDC', mint: 'M1', amount: 485.3 },
    { symbol: 'EURC', mint: 'M2', amount: 12.5 },
  ],
};

test('every asset of the network with what the wallet holds of it, zero without a token account, SOL last', () => {
  expect(holdingsOf(balance, ['USDC', 'PYUSD', 'USDG', 'EURC'])).toEqual([
    { symbol: 'USDC', amount: 485.3 },
    { symbol: 'PYUSD', amount: 0 },
    { symbol: 'USDG', amount: 0 },
    { symbol: 'EURC', amount: 12.5 },
    { symbol: 'SOL', amount: 0.999995 },
  ]);
  // The network's list not read yet (or one it no longer names): the balance's own assets still show.
  expect(holdingsOf(balance)).toEqual([
    { symbol: 'USDC', amount: 485.3 },
    { symbol: 'EURC', amount: 12.5 },
    { symbol: 'SOL', amount: 0.999995 },
  ]);
  expect(holdingsOf(balance, ['USDC', 'PYUSD']).map((h) => h.symbol)).toEqual(['USDC', 'PYUSD', 'EURC', 'SOL']);
});

test('the balance lists each asset in its units; a dash while it is unknown', () => {
  const { rerender } = render(<Holdings balance={balance} assets={['USDC', 'PYUSD', 'EURC']} />);
  const list = screen.getByRole('list', { name: 'Balance of each asset' });
  expect(
    within(list)
      .getAllByRole('listitem')
      .map((li) => [li.dataset.asset, li.textContent]),
  ).toEqual([
    ['USDC', '485.30 USDC'],
    ['PYUSD', '0.00 PYUSD'],
    ['EURC', '12.50 EURC'],
    ['SOL', '0.999995 SOL'],
  ]);
  expect(screen.getByTestId('balance-usdc').textContent).toBe('485.30 USDC');
  expect(screen.getByTestId('balance-sol').textContent).toBe('0.999995 SOL');
  rerender(<Holdings />);
  expect(screen.queryByRole('list')).toBeNull();
  expect(screen.getByText('—')).toBeTruthy();
});
