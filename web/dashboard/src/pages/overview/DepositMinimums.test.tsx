import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import { session } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { DepositMinimumsCard, minimumProblem } from './DepositMinimums';

const mins = { usdc: 0.01, eur: 0.01, sol: 0.001 };

beforeEach(() => setCSRF('csrf'));

test.each([
  ['0', 6, ''],
  ['0.01', 6, ''],
  ['1000000', 6, ''],
  ['1000001', 6, '0 to 1000000, 6 decimals at most.'],
  ['0.0000001', 6, '0 to 1000000, 6 decimals at most.'],
  ['-1', 6, '0 to 1000000, 6 decimals at most.'],
])('a minimum of %j (%d decimals): %j', (s, decimals, problem) => expect(minimumProblem(s, 1_000_000, decimals)).toBe(problem));

test('a viewer reads the minimums and changes nothing', async () => {
  renderRoute('/t', <DepositMinimumsCard mins={mins} session={session('viewer')} onChange={() => {}} />);
  expect(await screen.findByRole('heading', { name: 'Deposit minimums' })).toBeTruthy();
  expect(document.querySelector('[data-field="deposit-min-sol"]')!.textContent).toBe('0.001');
  expect(screen.queryByRole('button')).toBeNull();
});

test('an owner saves the minimums (PATCH); an invalid one is refused before sending', async () => {
  const requests = recordedFetch(() => ({ status: 200, body: { deposit_min_usdc: 1, deposit_min_eur: 0.01, deposit_min_sol: 0.001 } }));
  const onChange = vi.fn();
  renderRoute('/t', <DepositMinimumsCard mins={mins} session={session('owner')} onChange={onChange} />);
  const user = userEvent.setup();
  const usd = await screen.findByLabelText('USD stablecoins (USDC)');
  await user.clear(usd);
  await user.type(usd, '1.1234567');
  expect(screen.getByText('0 to 1000000, 6 decimals at most.')).toBeTruthy();
  expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
  await user.clear(usd);
  await user.type(usd, '1');
  await user.click(screen.getByRole('button', { name: 'Save' }));
  await vi.waitFor(() => expect(onChange).toHaveBeenCalledTimes(1));
  expect(requests.map((r) => [r.method, r.path, r.body, r.csrf])).toEqual([
    ['PATCH', '/api/public/v1/account/settings', { deposit_min_usdc: 1, deposit_min_eur: 0.01, deposit_min_sol: 0.001 }, 'csrf'],
  ]);
});
