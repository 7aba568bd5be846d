import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import { type FeePayer, toFeePayer } from '../../services/feePayer';
import { session } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { FeePayerCard, budgetProblem, fundProblem } from './FeePayerCard';

const fp = (f: Partial<Parameters<typeof toFeePayer>[0]> = {}): FeePayer =>
  toFeePayer({
    enabled: true,
    address: 'FeePayer1111111111111111111111111111111111',
    sol: 0.5,
    daily_budget_sol: 1,
    spent_today_sol: 0.25,
    transactions_today: 1,
    low: false,
    ...f,
  });

beforeEach(() => setCSRF('csrf'));

test.each([
  ['1', ''],
  ['0.000000001', ''],
  ['0', 'Above 0 and at most 100 SOL, 9 decimals at most.'],
  ['101', 'Above 0 and at most 100 SOL, 9 decimals at most.'],
  ['1.0000000001', 'Above 0 and at most 100 SOL, 9 decimals at most.'],
])('a budget of %j: %j', (s, problem) => expect(budgetProblem(s)).toBe(problem));

test.each([
  ['1.5', ''],
  ['1.1234567', 'Above 0 and at most 100 SOL, 6 decimals at most.'],
])('funding %j: %j', (s, problem) => expect(fundProblem(s)).toBe(problem));

test('low: a warning with its address; a failed read says it was not refreshed; a viewer changes nothing', async () => {
  renderRoute('/t', <FeePayerCard fp={fp({ low: true, sol: null })} error="node down" session={session('viewer')} onChange={() => {}} />);
  expect(await screen.findByRole('heading', { name: '⚠ Fee payer low on SOL' })).toBeTruthy();
  expect(document.querySelector('[data-field="fee-payer-sol"]')!.textContent).toBe('unavailable');
  expect(document.querySelector('[data-field="fee-payer-warning"]')!.textContent).toContain('FeePayer1111111111111111111111111111111111');
  expect(screen.getByText('Not refreshed: node down')).toBeTruthy();
  expect(document.querySelector('[data-field="fee-payer-spend"]')!.textContent).toBe('0.25 SOL of 1 SOL today (1 transaction)');
  expect(screen.queryByRole('button')).toBeNull();
});

test('an owner saves a budget (PUT), funds on localnet and turns sponsorship off; each success reads again', async () => {
  const requests = recordedFetch((r) => ({ status: 200, body: r.path.endsWith('/fund') ? { sol: 2, usdc: 0 } : { ...fp(), enabled: false } }));
  const onChange = vi.fn();
  renderRoute('/t', <FeePayerCard fp={fp()} error="" session={session('owner')} onChange={onChange} />);
  const user = userEvent.setup();
  const budget = await screen.findByLabelText('Daily budget (SOL)');
  await user.clear(budget);
  await user.type(budget, '200');
  expect(screen.getByText('Above 0 and at most 100 SOL, 9 decimals at most.')).toBeTruthy();
  expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
  await user.clear(budget);
  await user.type(budget, '2.5');
  await user.click(screen.getByRole('button', { name: 'Save' }));
  await user.click(screen.getByRole('button', { name: 'Fund' }));
  await user.click(screen.getByRole('button', { name: 'Turn off fee sponsorship' }));
  await vi.waitFor(() => expect(onChange).toHaveBeenCalledTimes(3));
  expect(requests.map((r) => [r.method, r.path, r.body, r.csrf])).toEqual([
    ['PUT', '/api/public/v1/fee-payer', { enabled: true, daily_budget_sol: 2.5 }, 'csrf'],
    ['POST', '/api/public/v1/fee-payer/fund', { sol: 1 }, 'csrf'],
    ['PUT', '/api/public/v1/fee-payer', { enabled: false }, 'csrf'],
  ]);
});

test('a refused change says why', async () => {
  recordedFetch(() => ({ status: 403, body: { error: 'owners only' } }));
  renderRoute('/t', <FeePayerCard fp={fp()} error="" session={session('owner')} onChange={() => {}} />);
  await userEvent.click(await screen.findByRole('button', { name: 'Turn off fee sponsorship' }));
  expect((await screen.findByRole('alert')).textContent).toBe('owners only');
});
