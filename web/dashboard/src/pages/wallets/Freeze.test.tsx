import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import type { Role } from '../../services/session';
import { session, wallet, WALLET_ID } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { Freeze } from './Freeze';

beforeEach(() => setCSRF('csrf'));

test.each<[Role, 'active' | 'frozen', string | null]>([
  ['owner', 'active', 'Freeze…'],
  ['approver', 'active', 'Freeze…'],
  ['viewer', 'active', null],
  ['owner', 'frozen', 'Unfreeze…'],
  ['approver', 'frozen', null],
])('a%s sees %s wallet with %s', async (role, state, button) => {
  renderRoute('/t', <Freeze agent={wallet({ state })} session={session(role)} onChanged={() => {}} />);
  const section = await screen.findByRole('region', { name: 'Freeze' });
  expect(screen.queryByRole('button')?.textContent ?? null).toBe(button);
  if (role === 'approver' && state === 'frozen') expect(section.textContent).toContain('Only an owner can unfreeze it.');
});

test('freezing asks first, then posts and hands over the wallet as it is now', async () => {
  const requests = recordedFetch(() => ({ status: 200, body: { ...wallet(), state: 'frozen', kind: 'agent', created_at: '2026-04-01T12:00:00Z' } }));
  const onChanged = vi.fn();
  renderRoute('/t', <Freeze agent={wallet()} session={session('owner')} onChanged={onChanged} />);
  const user = userEvent.setup();
  await user.click(await screen.findByRole('button', { name: 'Freeze…' }));
  expect(requests).toHaveLength(0);
  await user.click(await screen.findByRole('button', { name: 'Confirm freeze' }));
  await vi.waitFor(() => expect(onChanged).toHaveBeenCalledOnce());
  expect(onChanged.mock.calls[0][0].state).toBe('frozen');
  expect(requests.map((r) => [r.method, r.path, r.csrf])).toEqual([['POST', `/api/public/v1/agents/${WALLET_ID}/freeze`, 'csrf']]);
});
