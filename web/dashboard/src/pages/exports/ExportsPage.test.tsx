// The export requests' list and the decision, as an owner sees them. The
// API is a recorded fetch that answers as the real one does; the browser
// walk (test/walk.test.mjs) runs the same pages against the real API.
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, expect, test } from 'vitest';
import { setCSRF } from '../../services/api';
import type { ExportFromAPI } from '../../services/exports';
import { ADDRESS, WALLET_ID, session } from '../../test-fixtures';
import { recordedFetch, renderRoute } from '../../test-render';
import { ExportsPage } from './ExportsPage';

const KEY = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=';
const OTHER = 'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH';
const PUBKEY = 'Hk7uVkqN9qRcyM5KgEf4sHo2n1hZDEYYx3mM1wbW6Kx';

const request = (id: string, e: Partial<ExportFromAPI> = {}): ExportFromAPI => ({
  id,
  wallet_id: WALLET_ID,
  state: 'pending',
  recipient_public_key: KEY,
  requested_by: `user:${OTHER}`,
  requested_at: '2026-04-01T12:00:00Z',
  ...e,
});

/** api answers the list, the wallet's name and the decisions as the API does. */
function api(list: ExportFromAPI[]) {
  return recordedFetch((r) => {
    if (r.path.includes('/agents/')) return { status: 200, body: { id: WALLET_ID, label: 'research-bot', pubkey: PUBKEY } };
    if (r.method === 'GET') return { status: 200, body: { exports: list, next_cursor: null } };
    const id = r.path.split('/').at(-2)!;
    const i = list.findIndex((x) => x.id === id);
    list[i] = { ...list[i], state: r.path.endsWith('/approve') ? 'exported' : 'rejected', decided_by: `user:${ADDRESS}` };
    return { status: 200, body: list[i] };
  });
}

beforeEach(() => setCSRF('csrf'));

test('pending first: the wallet by name and address, who asked, the key the secret goes to', async () => {
  const requests = api([request('x-old', { state: 'exported' }), request('x-new')]);
  renderRoute('/exports', <ExportsPage session={session()} onState={() => {}} />);
  const items = await screen.findAllByRole('listitem');
  expect(items.map((li) => li.getAttribute('data-export'))).toEqual(['x-new', 'x-old']);
  await within(items[0]).findByText('research-bot');
  expect(within(items[0]).getByTitle(PUBKEY)).toBeTruthy();
  expect(within(items[0]).getByTitle(OTHER)).toBeTruthy();
  expect(within(items[0]).getByTestId('recipient').textContent).toBe(KEY);
  expect(within(items[1]).queryByRole('button', { name: 'Approve…' })).toBeNull(); // decided
  expect(requests.find((r) => r.path.includes('/exports?'))!.path).toBe('/api/public/v1/exports?limit=100');
});

test('approving asks first, in an alert dialog that shows the wallet and the recipient key', async () => {
  const requests = api([request('x1')]);
  renderRoute('/exports', <ExportsPage session={session()} onState={() => {}} />);
  const u = userEvent.setup();
  await u.click(await screen.findByRole('button', { name: 'Approve…' }));
  const dialog = await screen.findByRole('alertdialog');
  expect(within(dialog).getByTestId('dialog-recipient').textContent).toBe(KEY);
  expect(dialog.textContent).toContain(OTHER);
  expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
  await u.click(within(dialog).getByRole('button', { name: 'Approve the export' }));
  await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
  expect(requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.csrf])).toEqual([
    [`/api/public/v1/wallets/${WALLET_ID}/exports/x1/approve`, 'csrf'],
  ]);
  await waitFor(() => expect(screen.getByTestId('export-state').getAttribute('data-state')).toBe('exported'));
});

test('the owner who asked is not offered the approval, only to withdraw it', async () => {
  api([request('x1', { requested_by: `user:${ADDRESS}` })]);
  renderRoute('/exports', <ExportsPage session={session()} onState={() => {}} />);
  await screen.findByText('You asked: another owner approves.');
  expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
  expect(screen.getByRole('button', { name: 'Withdraw…' })).toBeTruthy();
});

test('a state filter reads that state alone; another role reads nothing', async () => {
  const requests = api([request('x1', { state: 'void', void_reason: 'the owner who asked for the export is no longer an owner' })]);
  let picked: string | undefined = 'void';
  renderRoute('/exports', <ExportsPage session={session()} state="void" onState={(s) => (picked = s)} />);
  await screen.findByText('Void: the owner who asked for the export is no longer an owner');
  expect(requests.find((r) => r.path.includes('/exports?'))!.path).toBe('/api/public/v1/exports?limit=100&state=void');
  await userEvent.setup().selectOptions(screen.getByRole('combobox', { name: 'State' }), '');
  expect(picked).toBeUndefined();

  const none = api([]);
  renderRoute('/exports', <ExportsPage session={session('approver')} onState={() => {}} />);
  await screen.findByText("Only owners read and decide requests to export a wallet's secret.");
  expect(none).toEqual([]);
});
