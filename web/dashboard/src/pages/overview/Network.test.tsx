import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { Network } from './Network';

test('mainnet says loudly that money is real; devnet that it is not', () => {
  const { unmount } = render(<Network network="mainnet" />);
  expect(screen.getByRole('region', { name: 'Network' }).textContent).toContain('Mainnet: REAL MONEY');
  unmount();
  render(<Network network="devnet" />);
  expect(screen.getByRole('region', { name: 'Network' }).textContent).toContain('no value');
});
