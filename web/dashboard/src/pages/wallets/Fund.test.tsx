import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import { WALLET_ID } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { Fund } from './Fund';

beforeEach(() => setCSRF('csrf'));

test('each amount checked against its cap; only the amounts given are sent, and the new balance said', async () => {
  const requests = recordedFetch(() => ({ status: 200, body: { usdc: 15, sol: 1 } }));
  const onFunded = vi.fn();
  renderRoute('/t', <Fund id={WALLET_ID} onFunded={onFunded} />);
  const user = userEvent.setup();
  const sol = await screen.findByLabelText('SOL');
  await user.clear(sol);
  await user.type(sol, '101');
  expect(screen.getByText('At most 100 SOL at a time.')).toBeTruthy();
  expect((screen.getByRole('button', { name: 'Fund' }) as HTMLButtonElement).disabled).toBe(true);
  await user.clear(sol);
  await user.clear(screen.getByLabelText('USDC'));
  expect((screen.getByRole('button', { name: 'Fund' }) as HTMLButtonElement).disabled).toBe(true);
  await user.type(screen.getByLabelText('USDC'), '5');
  await user.click(screen.getByRole('button', { name: 'Fund' }));
  expect((await screen.findByRole('status')).textContent).toBe('Funded: the wallet now holds 15.00 USDC and 1 SOL.');
  expect(onFunded.mock.calls[0][0]).toEqual({ usdc: 15, sol: 1 });
  expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([['POST', `/api/public/v1/wallets/${WALLET_ID}/fund`, { usdc: 5 }]]);
});

test('a refusal says why', async () => {
  recordedFetch(() => ({ status: 409, body: { error: 'not a local chain' } }));
  renderRoute('/t', <Fund id={WALLET_ID} onFunded={() => {}} />);
  await userEvent.click(await screen.findByRole('button', { name: 'Fund' }));
  expect((await screen.findByRole('alert')).textContent).toBe('not a local chain');
});
