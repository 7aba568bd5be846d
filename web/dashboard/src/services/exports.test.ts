import { expect, test } from 'vitest';
import { type ExportFromAPI, pendingFirst, recipientKeyProblem, toExport } from './exports';

const KEY = 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80='; // 32 bytes

test.each([
  ['', ''],
  [KEY, ''],
  [` ${KEY}\n`, ''],
  ['BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw==', 'An X25519 public key is 32 bytes; this is 31.'],
  [KEY.slice(0, -1), 'Not base64: paste the public key as base64 (44 characters ending in =).'],
  ['q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80-', 'Not base64: paste the public key as base64 (44 characters ending in =).'],
  ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', 'An X25519 public key is 32 bytes; this is 33.'],
])('recipientKeyProblem(%j) → %j', (s, want) => {
  expect(recipientKeyProblem(s)).toBe(want);
});

const fromAPI = (e: Partial<ExportFromAPI> = {}): ExportFromAPI => ({
  id: 'x1',
  wallet_id: 'w1',
  state: 'pending',
  recipient_public_key: KEY,
  requested_by: 'user:A',
  requested_at: '2026-04-01T12:00:00Z',
  ...e,
});

test('toExport maps the API’s request: absent fields are null, times are dates', () => {
  expect(toExport(fromAPI())).toEqual({
    id: 'x1',
    walletId: 'w1',
    state: 'pending',
    recipient: KEY,
    requestedBy: 'user:A',
    requestedAt: new Date('2026-04-01T12:00:00Z'),
    decidedBy: null,
    decidedAt: null,
    sealedAt: null,
    voidReason: null,
    sealedSecret: null,
  });
  const done = toExport(fromAPI({ state: 'exported', decided_by: 'user:B', decided_at: '2026-04-01T12:05:00Z', sealed_secret: 'c2VhbGVk' }));
  expect([done.decidedBy, done.decidedAt, done.sealedSecret]).toEqual(['user:B', new Date('2026-04-01T12:05:00Z'), 'c2VhbGVk']);
});

test('pendingFirst puts pending requests first, each group in the API’s order', () => {
  const es = (['exported', 'pending', 'rejected', 'pending'] as const).map((state, i) => toExport(fromAPI({ id: `x${i}`, state })));
  expect(pendingFirst(es).map((e) => e.id)).toEqual(['x1', 'x3', 'x0', 'x2']);
});
