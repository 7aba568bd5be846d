import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { wallet } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { LowSol } from './LowSol';
import type { BalanceRead } from './useOverview';

const A = wallet({ id: 'a0000000-0000-4000-8000-000000000001', label: 'alpha' });
const B = wallet({ id: 'b0000000-0000-4000-8000-000000000002', label: 'beta' });
const reads = (r: Record<string, BalanceRead>) => new Map(Object.entries(r));
const show = async (node: React.ReactNode) => {
  renderRoute('/t', node);
  return (await screen.findByRole('region', { name: /Low on SOL/ })).textContent;
};

test.each([
  ['the wallets not read yet', null, false, {}, 'Low on SOL for fees'],
  ['the wallets unreadable', null, true, {}, 'Unknown: the wallets could not be loaded.'],
  ['no wallets', [], false, {}, 'None: no wallets yet.'],
  ['balances being read', [A], false, {}, 'Checking balances…'],
  [
    'every balance fine',
    [A],
    false,
    { [A.id]: { balance: { sol: 1, usdc: 0, assets: [] }, error: '' } },
    'None: every wallet has at least 0.01 SOL.',
  ],
  ['no balance readable', [A], false, { [A.id]: { balance: null, error: 'down' } }, 'Unknown: no balance could be read.'],
])('%s', async (_, wallets, failed, r, says) => {
  expect(await show(<LowSol wallets={wallets} failed={failed} balances={reads(r)} />)).toContain(says);
});

test('the wallets low on SOL are listed with their balance, and those unread named', async () => {
  const text = await show(
    <LowSol
      wallets={[A, B]}
      failed={false}
      balances={reads({ [A.id]: { balance: { sol: 0.002, usdc: 5, assets: [] }, error: '' }, [B.id]: { balance: null, error: 'down' } })}
    />,
  );
  expect(text).toContain('⚠ Low on SOL for fees (1)');
  expect(screen.getByRole('link', { name: 'alpha' }).getAttribute('href')).toBe(`/wallets/${A.id}`);
  expect(text).toContain('0.002 SOL');
  expect(text).toContain('Not checked: the balance of beta could not be read.');
});
