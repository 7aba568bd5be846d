import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test } from 'vitest';
import { setCSRF } from '../../services/api';
import { WALLET_ID, wallet } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { AskExport } from './AskExport';

const KEY = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=';

beforeEach(() => setCSRF('csrf'));

test('an owner pastes a recipient key, checked as typed (32 bytes of base64), and asks', async () => {
  const requests = recordedFetch((r) => ({
    status: 201,
    body: {
      id: 'x1',
      wallet_id: WALLET_ID,
      state: 'pending',
      recipient_public_key: (r.body as { recipient_public_key: string }).recipient_public_key,
      requested_by: 'user:A',
      requested_at: '2026-04-01T12:00:00Z',
    },
  }));
  renderRoute('/t', <AskExport agent={wallet()} />);
  const u = userEvent.setup();
  const input = await screen.findByRole('textbox', { name: 'Recipient public key (X25519, base64)' });
  const ask = screen.getByRole('button', { name: 'Ask to export' }) as HTMLButtonElement;
  expect(ask.disabled).toBe(true);
  await u.type(input, 'AAAA');
  expect(screen.getByText('An X25519 public key is 32 bytes; this is 3.')).toBeTruthy();
  expect(ask.disabled).toBe(true);
  await u.clear(input);
  await u.type(input, ` ${KEY} `);
  expect(ask.disabled).toBe(false);
  await u.click(ask);
  await screen.findByRole('status');
  expect(requests.map((r) => [r.method, r.path, r.body, r.csrf])).toEqual([
    ['POST', `/api/public/v1/wallets/${WALLET_ID}/exports`, { recipient_public_key: KEY }, 'csrf'],
  ]);
  expect(screen.getByRole('link', { name: "export request's page" }).getAttribute('href')).toBe(`/exports/${WALLET_ID}/x1`);
});

test('a wallet whose key never leaves its signer offers no export', async () => {
  renderRoute('/t', <AskExport agent={wallet({ signer: 'vault' })} />);
  await screen.findByText(/never lets it out \(vault\)/);
  expect(screen.queryByRole('textbox')).toBeNull();
});
