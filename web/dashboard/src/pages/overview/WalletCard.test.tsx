import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { wallet } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { WalletCard } from './WalletCard';

const field = (name: string) => document.querySelector(`[data-field="${name}"]`)!;

test('a balance not read yet is "…", a failed read "unavailable", and the spend unknown says so', async () => {
  renderRoute(
    '/t',
    <ul>
      <WalletCard wallet={wallet()} read={{ balance: null, error: 'node down' }} spent={null} sponsored={false} />
    </ul>,
  );
  await screen.findByRole('link', { name: 'research-bot' });
  expect(field('usdc').textContent).toBe('unavailable');
  expect(screen.getAllByTitle('node down')).toHaveLength(2);
  expect(screen.getByText("Today's spend: unavailable")).toBeTruthy();
});

test('SOL below the floor is flagged unless the fee payer pays; a stale balance says it was not refreshed', async () => {
  const read = { balance: { sol: 0.001, usdc: 12.5, assets: [] }, error: 'timeout' };
  renderRoute(
    '/t',
    <ul>
      <WalletCard wallet={wallet()} read={read} spent={85} sponsored={false} />
    </ul>,
  );
  await screen.findByRole('link', { name: 'research-bot' });
  expect(field('usdc').textContent).toBe('12.50 USDC');
  expect(field('sol').className).toContain('text-bad');
  expect(screen.getByText('Balance not refreshed: timeout')).toBeTruthy();
  expect(field('spend').textContent).toBe('85.00 of 100.00 USDC today');
  expect(screen.getByRole('meter', { name: 'research-bot: spend today against the daily limit' }).className).toContain('high');
});

test('with sponsorship on, low SOL is not flagged', async () => {
  renderRoute(
    '/t',
    <ul>
      <WalletCard wallet={wallet({ state: 'frozen' })} read={{ balance: { sol: 0.001, usdc: 1, assets: [] }, error: '' }} spent={0} sponsored />
    </ul>,
  );
  await screen.findByRole('link', { name: 'research-bot' });
  expect(field('sol').className).not.toContain('text-bad');
  expect(document.querySelector('li')!.className).toContain('bg-info-soft');
});
