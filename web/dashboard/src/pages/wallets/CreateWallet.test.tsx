import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import { WALLET_ID, policy } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { CreateWallet } from './CreateWallet';

beforeEach(() => setCSRF('csrf'));

test('a name is needed; the wallet is created with its policy, and its page opens', async () => {
  const requests = recordedFetch((r) =>
    r.method === 'GET'
      ? { status: 200, body: { users: [] } }
      : {
          status: 201,
          body: { id: WALLET_ID, kind: 'agent', label: 'ops', pubkey: 'P', state: 'active', created_at: '2026-04-01T12:00:00Z', policy: policy() },
        },
  );
  const { router } = renderRoute('/wallets', <CreateWallet onClose={() => {}} />);
  const user = userEvent.setup();
  await user.click(await screen.findByRole('button', { name: 'Create wallet' }));
  expect(screen.getByText('Give the wallet a name.')).toBeTruthy();
  expect(requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  await user.type(screen.getByLabelText('Label'), ' ops ');
  await user.click(screen.getByRole('button', { name: 'Create wallet' }));
  await vi.waitFor(() => expect(router.state.location.pathname).toBe(`/wallets/${WALLET_ID}`));
  const post = requests.find((r) => r.method === 'POST')!;
  expect(post.path).toBe('/api/public/v1/agents');
  expect((post.body as { label: string }).label).toBe('ops');
});
