// The audit log's action filter: what it suggests, and what it asks for.
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test } from 'vitest';
import type { AuditEntryFromAPI } from '../../services/audit';
import { recordedFetch, renderRoute } from '../../test-render';
import { AuditPage } from './AuditPage';

const signed: AuditEntryFromAPI = {
  id: 'a1',
  seq: 7,
  at: '2026-04-01T12:00:00Z',
  actor: 'key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
  action: 'mpp.signed',
  target: 'wallet:5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21',
  details: { amount: 0.05, resource: 'https://seller.example/forecast' },
  hash: 'h7',
  prev_hash: 'h6',
};

/** theAPI answers the log (its entries of the action asked for) and an intact chain. */
const theAPI = () =>
  recordedFetch((r) =>
    r.path.includes('/audit-log/verification')
      ? { status: 200, body: { intact: true, entries: 7, from_seq: 1, verified_through_seq: 7, more: false, verified_at: '2026-04-01T12:01:00Z' } }
      : { status: 200, body: { entries: [signed], next_cursor: null } },
  );

test('the action filter suggests the MPP charges’ actions beside the x402 payments’', async () => {
  theAPI();
  renderRoute('/audit', <AuditPage />);
  await screen.findByRole('table', { name: 'Audit log' });
  const suggested = [...document.querySelectorAll('#audit-actions option')].map((o) => o.getAttribute('value'));
  expect(suggested).toEqual(expect.arrayContaining(['x402.signed', 'x402.expired', 'mpp.signed', 'mpp.expired']));
});

test('filtering by an action asks the log for it and puts it in the URL', async () => {
  const requests = theAPI();
  const { router } = renderRoute('/audit', <AuditPage />);
  const user = userEvent.setup();
  await screen.findByRole('table', { name: 'Audit log' });
  await user.type(screen.getByLabelText('Action'), 'mpp.signed');
  await user.click(screen.getByRole('button', { name: 'Filter' }));
  expect(await screen.findByText('mpp.signed', { selector: 'td' })).toBeTruthy();
  expect(requests.map((r) => r.path)).toContain('/api/public/v1/audit-log?limit=50&action=mpp.signed');
  expect(router.state.location.search).toEqual({ action: 'mpp.signed' });
});
