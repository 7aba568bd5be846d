// client.x402 against the running service and a real x402 seller (the
// official packages on the localnet): internal/httpapi/x402tools_test.go
// starts both and passes their URLs, keys and wallets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  ApprovalPendingError,
  PaymentBlockedError,
  PermissionError,
  ValidationError,
  X402ChallengeError,
} from '../dist/index.js';
import { admin, agent, env, WALLET } from './lib.mjs';

const SELLER = env('SELLER_URL');
const PRICE = Number(env('SELLER_PRICE')) / 1e6; // /weather, /memo/weather, /v1/weather
// WALLET is funded and holds no SOL; /premium's price is its approval threshold.
const WALLET_ALLOW = env('WALLET_ALLOWLIST'); // an allowlist without the seller

test('x402: fetch buys from the seller (v2) and answers the paid content', async () => {
  const { response, payment, settlement } = await agent.x402.fetchWithPayment(WALLET, `${SELLER}/weather`);
  assert.equal(response.status, 200, await response.clone().text());
  const body = await response.json();
  assert.equal(body.route, '/weather');
  assert.equal(payment.header, 'PAYMENT-SIGNATURE');
  assert.equal(payment.amount, PRICE);
  assert.equal(payment.payTo, env('SELLER_PAY_TO'));
  assert.equal(settlement.success, true);
  assert.ok(settlement.transaction, 'the seller names the settled transaction');
  // The service's record: reserved (signed) until its sweep finds it on chain, then settled.
  const rec = await agent.x402.payments.get(payment.paymentId);
  assert.deepEqual([rec.wallet_id, rec.amount, rec.pay_to, rec.resource], [WALLET, PRICE, payment.payTo, `${SELLER}/weather`]);
  assert.ok(['signed', 'settled'].includes(rec.state), rec.state);
  const listed = [];
  for await (const p of agent.x402.payments.list({ walletId: WALLET, pageSize: 2 })) listed.push(p.id);
  assert.ok(listed.includes(payment.paymentId));
  console.log(`x402 v2 settled ${settlement.transaction} payment ${payment.paymentId}`);
});

test('x402: a v1 challenge (402 JSON body) is paid with X-PAYMENT', async () => {
  const { response, payment } = await agent.x402.fetchWithPayment(WALLET, `${SELLER}/v1/weather`);
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(payment.header, 'X-PAYMENT');
  assert.equal((await response.json()).route, '/v1/weather');
});

test('x402: wrapFetch returns a fetch that pays (extra.memo honoured)', async () => {
  const paidFetch = agent.x402.wrapFetch(WALLET, { maxUsdc: PRICE });
  const res = await paidFetch(`${SELLER}/memo/weather`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json()).route, '/memo/weather');
  // A free answer passes through untouched: no payment asked for.
  const free = await paidFetch(`${SELLER}/health`);
  assert.deepEqual(await free.json(), { ok: true });
});

test('x402: a challenge over maxUsdc is a ValidationError and nothing is paid', async () => {
  const before = await agent.x402.fetch(WALLET, `${SELLER}/health`);
  assert.equal(before.status, 200);
  const err = await agent.x402.fetch(WALLET, `${SELLER}/weather`, undefined, { maxUsdc: PRICE / 2 }).catch((e) => e);
  assert.ok(err instanceof ValidationError, `got ${err}`);
  assert.equal(err.status, 422);
  assert.match(err.message, /max_usdc|amount/i);
});

test('x402: a price at the approval threshold parks: ApprovalPendingError with approvalId; approved, the retry buys once', async () => {
  const err = await agent.x402.fetch(WALLET, `${SELLER}/premium`).catch((e) => e);
  assert.ok(err instanceof ApprovalPendingError, `got ${err}`);
  assert.match(err.approvalId, /^ap_/);
  assert.equal((await admin.approvals.get(err.approvalId)).status, 'pending');
  await admin.approvals.approve(err.approvalId, 'x402 test');
  const { response, payment } = await agent.x402.fetchWithPayment(WALLET, `${SELLER}/premium`, undefined, { approvalId: err.approvalId });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal((await response.json()).route, '/premium');
  assert.equal(payment.amount, 5);
  // The grant is used up: a second purchase with it is refused, nothing signed.
  const again = await agent.x402.fetch(WALLET, `${SELLER}/premium`, undefined, { approvalId: err.approvalId }).catch((e) => e);
  assert.ok(again instanceof ValidationError, `got ${again}`);
});

test('x402: a seller outside the allowlist is a PaymentBlockedError (a PermissionError) with its reason', async () => {
  const err = await agent.x402.fetch(WALLET_ALLOW, `${SELLER}/weather`).catch((e) => e);
  assert.ok(err instanceof PaymentBlockedError && err instanceof PermissionError, `got ${err}`);
  assert.equal(err.reason, 'recipient_not_allowed');
});

test('x402: a streamed POST body is sent again, intact, on the paid retry', async () => {
  // A paid POST endpoint in front of the seller: it answers the seller's
  // own challenge, and passes the payment header of the retry to the
  // seller, which verifies and settles it.
  const seen = [];
  const challenge = await fetch(`${SELLER}/weather`);
  const required = challenge.headers.get('PAYMENT-REQUIRED');
  await challenge.body?.cancel();
  const front = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const payment = req.headers['payment-signature'];
    seen.push({ body: Buffer.concat(chunks).toString(), paid: Boolean(payment) });
    if (!payment) {
      res.writeHead(402, { 'PAYMENT-REQUIRED': required, 'Content-Type': 'application/json' }).end('{}');
      return;
    }
    const upstream = await fetch(`${SELLER}/weather`, { headers: { 'PAYMENT-SIGNATURE': payment } });
    res.writeHead(upstream.status, { 'Content-Type': 'application/json' }).end(await upstream.text());
  });
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  try {
    const enc = new TextEncoder();
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(enc.encode('{"question":'));
        c.enqueue(enc.encode('"rain?"}'));
        c.close();
      },
    });
    const res = await agent.x402.fetch(WALLET, `http://127.0.0.1:${front.address().port}/ask`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(seen, [
      { body: '{"question":"rain?"}', paid: false },
      { body: '{"question":"rain?"}', paid: true },
    ]);
  } finally {
    front.close();
  }
});

test('x402: a 402 without an x402 challenge is an X402ChallengeError, and no payment is asked for', async () => {
  const front = createServer((_req, res) => res.writeHead(402, { 'Content-Type': 'text/plain' }).end('pay me'));
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  try {
    const err = await agent.x402.fetch(WALLET, `http://127.0.0.1:${front.address().port}/`).catch((e) => e);
    assert.ok(err instanceof X402ChallengeError, `got ${err}`);
  } finally {
    front.close();
  }
});
