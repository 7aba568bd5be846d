// The edge: what the API sends, as the pages read it (dates as Date, null
// kept null, camelCase), and the query cache keeping an unchanged answer's
// objects (dates included) from one poll to the next.
import { describe, expect, test } from 'vitest';
import { usdc as usdcText } from '../format';
import { approvalFromAPI, transaction, transactionFromAPI } from '../test-fixtures';
import { date } from './api';
import { toApproval, toApprovalContext } from './approvals';
import { toAuditVerification } from './audit';
import { toFeePayer } from './feePayer';
import { toKey } from './keys';
import { instants, toBalanceDifference, toBalanceHistory, untouched } from './ledger';
import { shareDates } from './queryClient';
import { toSession } from './session';
import { moved, toTransaction } from './transactions';
import { toUser } from './users';
import { toWallet } from './wallets';
import { toDeliveryDetail, toEndpoint } from './webhooks';

describe('date', () => {
  test('a timestamp is a Date; none stays null', () => {
    expect(date('2026-04-01T12:05:00.123456Z')).toEqual(new Date('2026-04-01T12:05:00.123Z'));
    expect(date(null)).toBeNull();
    expect(date(undefined)).toBeNull();
  });
});

test('an approval: dates as dates, its votes too, undecided is null', () => {
  const a = toApproval(
    approvalFromAPI({
      wallet_id: 'w1',
      agent_label: 'bot',
      requested_by: 'key_1',
      expires_at: '2026-04-08T12:00:00Z',
      approvals: [{ by: 'user:A', person: 'user:A', at: '2026-04-01T12:05:00Z', note: 'ok' }],
      approvals_needed: 2,
    }),
  );
  expect(a).toMatchObject({ walletId: 'w1', agentLabel: 'bot', requestedBy: 'key_1', decidedAt: null, approvalsNeeded: 2 });
  expect(a.createdAt).toEqual(new Date('2026-04-01T12:00:00Z'));
  expect(a.expiresAt).toEqual(new Date('2026-04-08T12:00:00Z'));
  expect(a.approvals).toEqual([{ by: 'user:A', person: 'user:A', at: new Date('2026-04-01T12:05:00Z'), note: 'ok' }]);
});

test("an approval's context in camelCase", () => {
  const c = toApprovalContext({
    wallet: { id: 'w1', kind: 'agent', label: 'bot', pubkey: 'P', state: 'frozen', signer: 'local', created_at: '2026-03-01T09:00:00Z' },
    recipient: { address: 'To1', allowlist_empty: false, on_allowlist: true, label: 'Vendor', first_payment: true },
    if_approved_now: {
      outcome: 'blocked',
      reason: 'exceeds_daily_limit',
      remaining_today_usdc: 3,
      remaining_today_after_usdc: 0,
      remaining_today_eur: null,
      remaining_today_after_eur: null,
    },
    requester: { id: 'key_1', label: null, prefix: 'svc_1' },
    webhook: {
      deliveries: [{ delivery_id: 'd1', endpoint_id: 'e1', format: 'json', status: 'failed', url: 'https://x.test/h', attempts: 3 }],
      event: null,
    },
  });
  expect(c.recipient).toEqual({ address: 'To1', allowlistEmpty: false, onAllowlist: true, label: 'Vendor', firstPayment: true });
  expect(c.ifApprovedNow).toEqual({
    outcome: 'blocked',
    reason: 'exceeds_daily_limit',
    remainingTodayUsdc: 3,
    remainingTodayAfterUsdc: 0,
    remainingTodayEur: null,
    remainingTodayAfterEur: null,
  });
  expect(c.wallet.createdAt).toEqual(new Date('2026-03-01T09:00:00Z'));
  expect(c.webhook.deliveries[0]).toEqual({
    deliveryId: 'd1',
    endpointId: 'e1',
    format: 'json',
    status: 'failed',
    url: 'https://x.test/h',
    attempts: 3,
  });
});

test('a transaction: an absent resource is null, the fee kept as lamports', () => {
  const t = toTransaction(transactionFromAPI({ wallet_id: 'w1' }));
  expect(t).toMatchObject({ walletId: 'w1', feeLamports: 5000, approvalId: null, resource: null, previousSignatures: [] });
  expect(t.createdAt).toEqual(new Date('2026-04-01T12:00:00Z'));
});

test('a wallet keeps its policy as the API has it, its balance only when read, and its export time as a date', () => {
  const policy = { daily_limit_usdc: 100, max_tx_usdc: 20, approval_threshold_usdc: 10, allowlist: [] } as unknown as Parameters<
    typeof toWallet
  >[0]['policy'];
  const base = {
    id: 'w1',
    kind: 'agent' as const,
    label: 'bot',
    pubkey: 'P',
    state: 'active' as const,
    signer: 'local' as const,
    created_at: '2026-04-01T12:00:00Z',
    policy,
  };
  expect(toWallet(base)).toEqual({
    id: 'w1',
    label: 'bot',
    pubkey: 'P',
    state: 'active',
    signer: 'local',
    createdAt: new Date('2026-04-01T12:00:00Z'),
    policy,
  });
  expect(toWallet({ ...base, balance: { sol: 1, usdc: 2, assets: [] } }).balance).toEqual({ sol: 1, usdc: 2, assets: [] });
  expect(toWallet({ ...base, exported_at: '2026-04-02T09:30:00Z' }).exportedAt).toEqual(new Date('2026-04-02T09:30:00Z'));
});

test('keys, users, the fee payer, the chain, endpoints, deliveries and the session', () => {
  const k = toKey({
    id: 'k1',
    prefix: 'svc_1',
    label: null,
    role: 'agent',
    wallet_ids: null,
    created_by: null,
    created_at: '2026-04-01T12:00:00Z',
    last_used_at: null,
    revoked_at: '2026-04-02T12:00:00Z',
    replaced_by: 'k2',
    can_approve: false,
  });
  expect(k).toMatchObject({ walletIds: null, lastUsedAt: null, revokedAt: new Date('2026-04-02T12:00:00Z'), replacedBy: 'k2' });
  expect(toUser({ address: 'A', role: 'viewer', created_at: '2026-04-01T12:00:00Z', live_keys: 2, slack_user_id: null })).toEqual({
    address: 'A',
    role: 'viewer',
    createdAt: new Date('2026-04-01T12:00:00Z'),
    liveKeys: 2,
    slackUserId: null,
  });
  expect(
    toFeePayer({ enabled: true, address: null, sol: null, daily_budget_sol: 1, spent_today_sol: 0.5, transactions_today: 3, low: true }),
  ).toEqual({ enabled: true, address: null, sol: null, dailyBudgetSol: 1, spentTodaySol: 0.5, transactionsToday: 3, low: true });
  expect(
    toAuditVerification({
      entries: 3,
      from_seq: 1,
      intact: false,
      more: false,
      verified_at: '2026-04-01T12:00:00Z',
      verified_through_seq: 2,
      first_break: { entry_id: 'e', seq: 3, problem: 'hash' },
    }),
  ).toEqual({
    intact: false,
    verifiedThroughSeq: 2,
    verifiedAt: new Date('2026-04-01T12:00:00Z'),
    more: false,
    firstBreak: { seq: 3, problem: 'hash' },
  });
  const e = toEndpoint({
    id: 'e1',
    url: 'https://x.test/h',
    format: 'slack',
    events: ['tx.sent'],
    description: null,
    enabled: true,
    slack_approvers: ['U1'],
    created_at: '2026-04-01T12:00:00Z',
    updated_at: '2026-04-01T13:00:00Z',
    previous_secret_expires_at: null,
  });
  expect(e).toMatchObject({ slackApprovers: ['U1'], previousSecretExpiresAt: null, updatedAt: new Date('2026-04-01T13:00:00Z') });
  const d = toDeliveryDetail({
    id: 'd1',
    endpoint_id: 'e1',
    event: 'tx.sent',
    event_id: 'evt_1',
    status: 'failed',
    attempts: 1,
    replay_of: null,
    created_at: '2026-04-01T12:00:00Z',
    last_attempt_at: '2026-04-01T12:00:01Z',
    completed_at: null,
    payload: { event: 'tx.sent' },
    attempt_log: [{ n: 1, at: '2026-04-01T12:00:01Z', status_code: 500, latency_ms: 12, error: null, response_head: 'oops' }],
  });
  expect(d).toMatchObject({ eventId: 'evt_1', completedAt: null, payload: { event: 'tx.sent' } });
  expect(d.attemptLog).toEqual([{ n: 1, at: new Date('2026-04-01T12:00:01Z'), statusCode: 500, latencyMs: 12, error: null, responseHead: 'oops' }]);
  expect(
    toSession({
      address: 'A',
      account_id: 'acc',
      role: 'owner',
      network: 'devnet',
      csrf_token: 'c',
      accounts: [{ account_id: 'acc', network: 'devnet', role: 'owner' }],
      local_chain: true,
    }),
  ).toEqual({
    address: 'A',
    accountId: 'acc',
    role: 'owner',
    network: 'devnet',
    csrfToken: 'c',
    accounts: [{ accountId: 'acc', network: 'devnet', role: 'owner' }],
    localChain: true,
  });
});

describe('shareDates', () => {
  const answer = () => ({ items: [{ id: 'a', at: new Date('2026-04-01T12:00:00Z'), tags: ['x'] }], next: null });

  test('an equal answer keeps the cached objects, dates included', () => {
    const old = answer();
    expect(shareDates(old, answer())).toBe(old);
  });

  test('a changed answer keeps what did not change', () => {
    const old = { a: answer(), b: { at: new Date('2026-04-01T12:00:00Z') } };
    const next = { a: answer(), b: { at: new Date('2026-04-01T12:00:01Z') } };
    const shared = shareDates(old, next) as typeof old;
    expect(shared).not.toBe(old);
    expect(shared.a).toBe(old.a);
    expect(shared.b).not.toBe(old.b);
    expect(shared.b.at.getTime()).toBe(Date.parse('2026-04-01T12:00:01Z'));
  });

  test('a key added or removed, or a longer list, is a change', () => {
    expect(shareDates({ a: 1 }, { a: 1, b: 2 })).toEqual({ a: 1, b: 2 });
    const old = { a: 1, b: 2 };
    expect(shareDates(old, { a: 1 })).not.toBe(old);
    const list = [1, 2];
    expect(shareDates(list, [1, 2, 3])).toEqual([1, 2, 3]);
  });
});

test('a transaction says what it moved, in its asset: a deposit signed +, SOL in SOL', () => {
  expect(moved(transaction({ amount: 1.5 }))).toBe(usdcText(1.5));
  expect(moved(transaction({ amount: 2.5, direction: 'receive' }))).toBe('+' + usdcText(2.5));
  expect(moved(transaction({ amount: 0.25, direction: 'receive', kind: 'sol', asset: 'SOL' }))).toBe('+0.25 SOL');
  expect(moved(transaction({ amount: 1.5, kind: 'pyusd', asset: 'PYUSD' }))).toBe(usdcText(1.5).replace('USDC', 'PYUSD'));
  expect(moved(transaction({ amount: 20, kind: 'eurc', asset: 'EURC' }))).toBe(usdcText(20).replace('USDC', 'EURC'));
  // A deposit a fork dropped brought nothing: its status says so, the amount has no +.
  expect(moved(transaction({ amount: 2.5, direction: 'receive', status: 'failed' }))).toBe(usdcText(2.5));
  expect(transaction({ direction: 'receive' }).direction).toBe('receive');
});

test("a wallet's balance over time: a series per asset, instants as dates, oldest first as sent; all zero is a ledger with nothing yet", () => {
  const h = toBalanceHistory(
    {
      wallet_id: 'w1',
      series: [
        {
          asset: 'USDC',
          decimals: 6,
          points: [
            { at: '2026-04-01T12:00:00Z', asset: 'USDC', amount: 0 },
            { at: '2026-04-02T12:00:00Z', asset: 'USDC', amount: 0 },
          ],
        },
        {
          asset: 'EURC',
          decimals: 6,
          points: [
            { at: '2026-04-01T12:00:00Z', asset: 'EURC', amount: 0 },
            { at: '2026-04-02T12:00:00Z', asset: 'EURC', amount: 12.5 },
          ],
        },
      ],
    },
    'day',
  );
  expect(h).toEqual({
    interval: 'day',
    series: [
      {
        asset: 'USDC',
        decimals: 6,
        points: [
          { at: new Date('2026-04-01T12:00:00Z'), amount: 0 },
          { at: new Date('2026-04-02T12:00:00Z'), amount: 0 },
        ],
      },
      {
        asset: 'EURC',
        decimals: 6,
        points: [
          { at: new Date('2026-04-01T12:00:00Z'), amount: 0 },
          { at: new Date('2026-04-02T12:00:00Z'), amount: 12.5 },
        ],
      },
    ],
  });
  expect(instants(h)).toEqual([new Date('2026-04-01T12:00:00Z'), new Date('2026-04-02T12:00:00Z')]);
  expect(untouched(h)).toBe(false);
  expect(untouched({ interval: 'hour', series: [h.series[0]] })).toBe(true);
  expect(untouched({ interval: 'hour', series: [] })).toBe(true);
  expect(instants({ interval: 'hour', series: [] })).toEqual([]);
});

test('a difference of the balance: its time as a date, what it lacks null', () => {
  const outflow = toBalanceDifference({
    id: 'd1',
    kind: 'unexplained_outflow',
    asset: 'USDC',
    amount: -4.5,
    at: '2026-04-02T08:00:00Z',
    slot: 1234,
    signature: 'Sig1',
    to: 'To1',
    chain: null,
    ledger: null,
  });
  expect(outflow).toEqual({
    id: 'd1',
    kind: 'unexplained_outflow',
    asset: 'USDC',
    amount: -4.5,
    at: new Date('2026-04-02T08:00:00Z'),
    slot: 1234,
    signature: 'Sig1',
    to: 'To1',
    chain: null,
    ledger: null,
  });
  const snapshot = toBalanceDifference({
    id: 'd2',
    kind: 'snapshot',
    asset: 'SOL',
    amount: -0.1,
    at: '2026-04-03T00:00:00Z',
    slot: 99,
    signature: null,
    to: null,
    chain: 0.4,
    ledger: 0.5,
  });
  expect(snapshot).toMatchObject({ kind: 'snapshot', signature: null, to: null, chain: 0.4, ledger: 0.5 });
});
