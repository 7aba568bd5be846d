// @agentwallet/sdk against the running service (started by go test: see
// internal/httpapi/sdk_test.go, which passes URLs, keys and wallets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
  AgentWallet,
  AuthenticationError,
  NotFoundError,
  PermissionError,
  ValidationError,
  ConflictError,
  WebhookVerificationError,
  isWebhookEvent,
  verifyWebhook,
  verifyServiceSignature,
} from '../dist/index.js';
import { admin, agent, address, API_URL, env, WALLET } from './lib.mjs';

const WALLET_250 = env('WALLET_250');
/** A wallet paid 2.5 USDC and 0.25 SOL from DEPOSIT_SENDER (it held 1 SOL from a faucet before, outside its ledger). */
const DEPOSITS = env('DEPOSIT_WALLET');
/** A wallet whose policy lists USDC and EURC (a EUR day of 20, at most 10 a payment, a human from 8), holding 50 EURC. */
const EUR_WALLET = env('EUR_WALLET');
const SENDER = env('DEPOSIT_SENDER');

async function all(items) {
  const out = [];
  for await (const it of items) out.push(it);
  return out;
}

test('the three send outcomes, as values', async () => {
  const sent = await agent.agents.send(WALLET, { to: address(), amount: 1.5, memo: 'sdk' });
  assert.equal(sent.status, 'sent');
  assert.ok(sent.signature && sent.idempotencyKey);
  const parked = await agent.agents.send(WALLET, { to: address(), amount: 6 });
  assert.equal(parked.status, 'pending_approval');
  assert.match(parked.approvalId, /^ap_/);
  const blocked = await agent.agents.send(WALLET, { to: address(), amount: 11 });
  assert.deepEqual([blocked.status, blocked.reason], ['blocked', 'exceeds_max_tx']);
  assert.equal(typeof blocked.remainingTodayUsdc, 'number');
  // The same key again: the first answer, replayed.
  const again = await agent.agents.send(WALLET, { to: address(), amount: 6, idempotencyKey: parked.idempotencyKey }).catch((e) => e);
  assert.ok(again instanceof ValidationError, 'another body under the same key is refused');
});

test('other assets: a EURC send listed under its asset, parked with it, blocks in euros, an asset the policy does not list', async () => {
  const { assets } = await admin.assets.list();
  assert.deepEqual(
    assets.filter((a) => a.symbol === 'USDC' || a.symbol === 'EURC').map((a) => [a.symbol, a.currency]),
    [
      ['USDC', 'USD'],
      ['EURC', 'EUR'],
    ],
  );
  const to = address();
  // The LangChain tests spend from this wallet too: the EUR day is read first.
  const preview = await admin.agents.preview(EUR_WALLET, { to, amount: 2, asset: 'EURC' });
  assert.deepEqual([preview.outcome, preview.asset, preview.currency, preview.daily_limit_eur], ['sent', 'EURC', 'EUR', 20]);
  const left = preview.remaining_today_eur - 2;
  const sent = await admin.agents.send(EUR_WALLET, { to, amount: 2, asset: 'eurc' });
  assert.equal(sent.status, 'sent');
  const eurc = await all(admin.transactions.list({ walletId: EUR_WALLET, asset: 'EURC' }));
  assert.ok(eurc.length > 0 && eurc.every((t) => t.asset === 'EURC' && t.kind === 'eurc'));
  assert.deepEqual(
    eurc.filter((t) => t.counterparty === to).map((t) => [t.asset, t.amount]),
    [['EURC', 2]],
  );
  assert.equal((await all(admin.transactions.list({ walletId: EUR_WALLET, asset: 'USDC' }))).length, 0);
  const parked = await admin.agents.send(EUR_WALLET, { to, amount: 9, asset: 'EURC' });
  assert.equal(parked.status, 'pending_approval');
  const approval = await admin.approvals.get(parked.approvalId);
  assert.deepEqual([approval.asset, approval.amount], ['EURC', 9]);
  const context = await admin.approvals.context(parked.approvalId);
  assert.deepEqual([context.if_approved_now.remaining_today_eur, context.if_approved_now.remaining_today_after_eur], [left, left - 9]);
  const blocked = await admin.agents.send(EUR_WALLET, { to, amount: 11, asset: 'EURC' });
  assert.deepEqual([blocked.status, blocked.reason, blocked.currency, blocked.remainingTodayEur], ['blocked', 'exceeds_max_tx', 'EUR', left]);
  const notListed = await admin.agents.send(EUR_WALLET, { to, amount: 1, asset: 'PYUSD' });
  assert.deepEqual([notListed.status, notListed.reason, notListed.currency], ['blocked', 'asset_not_allowed', 'USD']);
  const { policy, balance } = await admin.agents.get(EUR_WALLET);
  assert.deepEqual([policy.assets, policy.daily_limit_eur, policy.weekly_limit_eur], [['USDC', 'EURC'], 20, null]);
  assert.deepEqual(
    balance.assets.map((a) => a.symbol),
    ['USDC', 'EURC'],
  );
});

test('a 429 is retried under the same Idempotency-Key and pays once', async () => {
  // The first answer is lost after the service acted, as a 429 with Retry-After.
  let lost = 0;
  const keys = [];
  const flaky = new AgentWallet({
    apiKey: env('AGENT_KEY'),
    baseUrl: API_URL,
    fetch: async (req) => {
      keys.push(req.headers.get('idempotency-key'));
      const res = await fetch(req);
      if (lost++ === 0) return new Response('{"error":"Rate limited"}', { status: 429, headers: { 'Retry-After': '1' } });
      return res;
    },
  });
  const to = address();
  const r = await flaky.agents.send(WALLET, { to, amount: 2 });
  assert.equal(r.status, 'sent');
  assert.equal(r.replayed, true, 'the retry got the stored answer');
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  let n = 0;
  for await (const t of admin.transactions.list({ walletId: WALLET })) if (t.counterparty === to) n++;
  assert.equal(n, 1, 'one payment');
});

test('cursor iteration over 250 transactions', async () => {
  const seen = new Set();
  for await (const t of admin.transactions.list({ walletId: WALLET_250, pageSize: 40 })) {
    assert.ok(!seen.has(t.id), 'no transaction twice');
    seen.add(t.id);
  }
  assert.equal(seen.size, 250);
});

test('every method once', async () => {
  const a = await admin.agents.create('sdk-every', { max_tx_usdc: 10 });
  assert.equal(a.label, 'sdk-every');
  assert.ok((await admin.agents.list()).some((x) => x.id === a.id));
  assert.equal((await admin.agents.get(a.id)).id, a.id);
  assert.equal((await admin.agents.updatePolicy(a.id, { max_tx_usdc: 5 })).policy.max_tx_usdc, 5);
  assert.equal((await admin.agents.freeze(a.id)).state, 'frozen');
  await assert.rejects(agent.agents.unfreeze(a.id), PermissionError);
  assert.equal((await admin.agents.unfreeze(a.id)).state, 'active');
  assert.ok((await admin.wallets.list()).length >= 2);
  assert.equal(typeof (await admin.wallets.balance(WALLET)).usdc, 'number');
  assert.equal((await agent.agents.preview(WALLET, { to: address(), amount: 1 })).outcome, 'sent');

  const parked = await agent.agents.send(WALLET, { to: address(), amount: 7 });
  const pending = [];
  for await (const ap of admin.approvals.list({ status: 'pending' })) pending.push(ap.id);
  assert.ok(pending.includes(parked.approvalId));
  assert.equal((await admin.approvals.get(parked.approvalId)).status, 'pending');
  assert.equal((await admin.approvals.context(parked.approvalId)).if_approved_now.outcome, 'sent');
  assert.equal((await admin.approvals.approve(parked.approvalId, 'ok')).status, 'sent');
  await assert.rejects(admin.approvals.approve(parked.approvalId), ConflictError);
  const other = await agent.agents.send(WALLET, { to: address(), amount: 8 });
  assert.equal((await agent.approvals.reject(other.approvalId, 'no')).status, 'rejected');

  let entries = 0;
  for await (const e of admin.auditLog.list({ action: 'send.sent', pageSize: 5 })) if (++entries > 3) break;
  assert.ok(entries > 0);
  const chain = await admin.auditLog.verify();
  assert.ok(chain.intact && chain.verified_through_seq === chain.from_seq + chain.entries && chain.verified_through_seq > 0, JSON.stringify(chain));
  await assert.rejects(agent.auditLog.verify(), PermissionError);
  const stats = await admin.analytics.get();
  assert.ok(stats.spend.some((d) => d.wallet_id === WALLET && d.amount_usdc > 0), JSON.stringify(stats.spend));
  await assert.rejects(admin.analytics.get({ from: '2026-02-30' }), ValidationError);

  const k = await admin.keys.create({ label: 'sdk key', walletIds: [a.id] });
  assert.deepEqual([k.role, k.wallet_ids], ['agent', [a.id]]);
  let keys = 0;
  for await (const _ of admin.keys.list()) keys++;
  assert.ok(keys >= 3);
  const rotated = await admin.keys.rotate(k.id);
  assert.equal(rotated.replaces, k.id);
  assert.ok((await admin.keys.revoke(rotated.id)).revoked_at);
  await assert.rejects(new AgentWallet({ apiKey: rotated.key, baseUrl: API_URL, maxRetries: 0 }).agents.list(), AuthenticationError);

  const hook = await receiver();
  const ep = await admin.webhooks.create({ url: hook.url, events: ['tx.sent'] });
  await hook.next();
  assert.ok((await admin.webhooks.list()).some((e) => e.id === ep.id));
  assert.equal((await admin.webhooks.get(ep.id)).url, hook.url);
  assert.equal((await admin.webhooks.update(ep.id, { description: 'd' })).description, 'd');
  await hook.next();
  const fresh = await admin.webhooks.rotateSecret(ep.id);
  assert.notEqual(fresh.secret, ep.secret);
  const ds = [];
  for await (const d of admin.webhooks.deliveries(ep.id)) ds.push(d);
  assert.ok(ds.length >= 2);
  assert.ok((await admin.webhooks.getDelivery(ds[0].id)).attempt_log.length >= 0);
  assert.ok((await admin.webhooks.replay(ds[0].id)).replay_of);
  await admin.webhooks.delete(ep.id);
  await assert.rejects(admin.webhooks.get(ep.id), NotFoundError);
  hook.close();

  const u = address();
  assert.equal((await admin.users.create(u, 'approver')).role, 'approver');
  assert.ok((await admin.users.list()).some((x) => x.address === u));
  assert.equal((await admin.users.update(u, 'viewer')).role, 'viewer');
  await admin.users.delete(u);
  await assert.rejects(admin.users.delete(u), NotFoundError);
});

test('typed errors', async () => {
  await assert.rejects(new AgentWallet({ apiKey: 'svc_test_nope', baseUrl: API_URL }).agents.list(), AuthenticationError);
  await assert.rejects(admin.agents.get('00000000-0000-4000-8000-000000000000'), NotFoundError);
  const e = await admin.agents.create('', {}).catch((x) => x);
  assert.ok(e instanceof ValidationError);
  assert.equal(e.field, 'label');
  await assert.rejects(agent.webhooks.list(), PermissionError);
});

/** receiver is a local webhook receiver: next() resolves with each delivery. */
async function receiver() {
  const queue = [];
  const waiting = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      res.end('ok');
      const d = { headers: req.headers, body: Buffer.concat(chunks) };
      const w = waiting.shift();
      w ? w(d) : queue.push(d);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))),
    close: () => server.close(),
  };
}

test('webhook verification of real deliveries, both secrets during a rotation, tampering and old timestamps', async () => {
  const hook = await receiver();
  const ep = await admin.webhooks.create({ url: hook.url, events: ['tx.sent'] });
  const d1 = await hook.next();
  const ev = await verifyWebhook(d1.body, d1.headers, ep.secret);
  assert.equal(ev.event, 'webhook.test');
  assert.equal((await verifyServiceSignature(d1.body, d1.headers, ep.secret)).event_id, ev.event_id);
  // A rotation: the next delivery verifies with the old and the new secret.
  const fresh = await admin.webhooks.rotateSecret(ep.id);
  await admin.webhooks.update(ep.id, { enabled: true });
  const d2 = await hook.next();
  assert.equal((await verifyWebhook(d2.body, d2.headers, ep.secret)).event, 'webhook.test');
  assert.equal((await verifyWebhook(d2.body, d2.headers, fresh.secret)).event, 'webhook.test');
  // Refusals.
  const tampered = Buffer.from(d2.body.toString().replace('webhook.test', 'webhook.tost'));
  await assert.rejects(verifyWebhook(tampered, d2.headers, fresh.secret), WebhookVerificationError);
  await assert.rejects(verifyServiceSignature(tampered, d2.headers, fresh.secret), WebhookVerificationError);
  const later = () => new Date(Date.now() + 10 * 60 * 1000);
  await assert.rejects(verifyWebhook(d2.body, d2.headers, fresh.secret, { now: later }), /more than 300 s/);
  await assert.rejects(verifyWebhook(d2.body, d2.headers, 'whsec_' + randomBytes(32).toString('base64')), WebhookVerificationError);
  await admin.webhooks.delete(ep.id);
  hook.close();
});

test('money coming in: deposits listed as receive, the balance history, received in analytics', async () => {
  const receives = await all(agent.transactions.list({ walletId: DEPOSITS, direction: 'receive' }));
  assert.equal(receives.length, 2);
  const byKind = Object.fromEntries(receives.map((t) => [t.kind, t]));
  for (const t of receives) assert.deepEqual([t.direction, t.counterparty, t.status, t.wallet_id], ['receive', SENDER, 'confirmed', DEPOSITS]);
  assert.equal(byKind.usdc.amount, 2.5);
  assert.equal(byKind.sol.amount, 0.25);
  assert.equal((await all(agent.transactions.list({ walletId: DEPOSITS, direction: 'send' }))).length, 0);
  assert.equal((await all(agent.transactions.list({ walletId: DEPOSITS }))).length, 2);

  const at = new Date(Date.now() + 1000);
  const now = await agent.wallets.balanceHistory(DEPOSITS, { at });
  assert.equal(now.wallet_id, DEPOSITS);
  assert.deepEqual(
    now.series.map((s) => [s.asset, s.decimals, s.points.map((p) => [p.asset, p.amount])]),
    [['USDC', 6, [['USDC', 2.5]]]],
  );
  const every = await agent.wallets.balanceHistory(DEPOSITS, { asset: 'all', at });
  const held = Object.fromEntries(every.series.map((s) => [s.asset, s.points[0].amount]));
  assert.deepEqual([every.series[0].asset, every.series.at(-1).asset, every.series.at(-1).decimals], ['USDC', 'SOL', 9]);
  assert.deepEqual([held.USDC, held.EURC, held.SOL], [2.5, 0, 1.25]);
  const [hours] = (await agent.wallets.balanceHistory(DEPOSITS, { interval: 'hour', to: at })).series;
  assert.equal(hours.points.length, 31);
  assert.deepEqual([hours.points[0].amount, hours.points[30].amount], [0, 2.5]);
  const [days] = (await agent.wallets.balanceHistory(DEPOSITS, { asset: 'sol', from: new Date(Date.now() - 3 * 86_400_000), to: at })).series;
  assert.equal(days.points.length, 4);
  assert.deepEqual([days.points[3].asset, days.points[3].amount], ['SOL', 1.25]);
  await assert.rejects(agent.wallets.balanceHistory(DEPOSITS, { at: 'yesterday' }), ValidationError);
  await assert.rejects(agent.wallets.balanceHistory(DEPOSITS, { asset: 'DOGE' }), ValidationError);
  await assert.rejects(agent.wallets.balanceHistory('00000000-0000-4000-8000-000000000000'), NotFoundError);

  const { received } = await admin.analytics.get();
  const mine = received.filter((r) => r.wallet_id === DEPOSITS).map((r) => [r.asset, r.amount, r.deposits]).sort();
  assert.deepEqual(mine, [['SOL', 0.25, 1], ['USDC', 2.5, 1]]);
});

test('a tx.received delivery, verified, narrows to its typed data', async () => {
  const endpoint = env('DEPOSIT_ENDPOINT');
  const deliveries = (await all(admin.webhooks.deliveries(endpoint))).filter((d) => d.event === 'tx.received');
  assert.equal(deliveries.length, 2);
  const hook = await receiver();
  await admin.webhooks.update(endpoint, { url: hook.url });
  await admin.webhooks.replay(deliveries[0].id);
  let ev;
  do {
    const d = await hook.next();
    ev = await verifyWebhook(d.body, d.headers, env('DEPOSIT_ENDPOINT_SECRET'));
  } while (ev.event !== 'tx.received');
  hook.close();
  assert.ok(isWebhookEvent(ev, 'tx.received'));
  assert.ok(!isWebhookEvent(ev, 'tx.receive_failed'));
  const { data } = ev;
  const listed = (await all(admin.transactions.list({ walletId: DEPOSITS, direction: 'receive' }))).find((t) => t.id === data.transaction_id);
  assert.ok(listed, `transaction_id ${data.transaction_id} is a listed deposit`);
  assert.deepEqual(
    [data.wallet_id, data.from, data.asset, data.amount, data.signature],
    [DEPOSITS, SENDER, listed.kind, listed.amount, listed.signature],
  );
  assert.ok(Number.isInteger(data.slot) && data.slot > 0, `slot ${data.slot}`);
});

test('balance differences page by page', async () => {
  // 3 USDC and 1 SOL from a faucet (no transaction): the snapshot found both apart from the ledger.
  const items = await all(agent.wallets.balanceDifferences(env('UNEXPLAINED_WALLET'), { pageSize: 1 }));
  assert.deepEqual(items.map((d) => [d.kind, d.asset, d.amount, d.chain, d.ledger, d.signature, d.to]).sort(), [
    ['snapshot', 'SOL', 1, 1, 0, null, null],
    ['snapshot', 'USDC', 3, 3, 0, null, null],
  ]);
  const sol = await all(agent.wallets.balanceDifferences(env('UNEXPLAINED_WALLET'), { asset: 'sol' }));
  assert.deepEqual(sol.map((d) => [d.asset, d.amount]), [['SOL', 1]]);
  assert.ok(items[0].at >= items[1].at && items[0].id !== items[1].id && items[0].slot > 0, 'newest first');
  assert.deepEqual(await all(agent.wallets.balanceDifferences(DEPOSITS)), [], 'a wallet paid only by transactions has nothing unexplained');
  await assert.rejects(all(agent.wallets.balanceDifferences('00000000-0000-4000-8000-000000000000')), NotFoundError);
});
