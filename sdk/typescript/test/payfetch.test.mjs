// client.payFetch and client.mpp against the running service, the official
// MPP seller and a resource offering both protocols (the MPP seller's
// challenges and the official x402 seller's, each paid retry passed to the
// seller whose credential it carries): internal/httpapi/payfetch_ts_test.go
// starts them and checks what each seller received.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { PaymentBlockedError, PaymentChallengeError, PermissionError, X402ChallengeError } from '../dist/index.js';
import { admin, agent, env, WALLET } from './lib.mjs';

const MPP_SELLER = env('MPP_SELLER_URL');
const MPP_PRICE = Number(env('MPP_PRICE')) / 1e6;
const BOTH = env('BOTH_URL'); // MPP at MPP_PRICE, x402 at X402_PRICE
const X402_PRICE = Number(env('X402_PRICE')) / 1e6;
const WALLET_PARKING = env('WALLET_PARKING'); // its approval threshold is MPP_PRICE
const WALLET_ALLOW = env('WALLET_ALLOWLIST'); // an allowlist without the sellers

test('payFetch: buys from the MPP seller and records its receipt', async () => {
  const { response, payment } = await agent.payFetch(`${MPP_SELLER}/weather`, undefined, { walletId: WALLET });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal((await response.json()).route, '/weather');
  assert.deepEqual(
    [payment.protocol, payment.status, payment.amount, payment.asset, payment.payTo, payment.resource],
    ['mpp', 'paid', MPP_PRICE, 'USDC', env('MPP_RECIPIENT'), `${MPP_SELLER}/weather`],
  );
  assert.equal(payment.mpp.header, 'Authorization');
  assert.equal(payment.receiptError, undefined);
  assert.equal(payment.receipt.status, 'success');
  assert.match(payment.receipt.reference, /^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
  // The service's record has the receipt; a second report changes nothing.
  const rec = await agent.mpp.payments.get(payment.paymentId);
  assert.deepEqual([rec.wallet_id, rec.amount, rec.pay_to, rec.receipt?.reference], [WALLET, MPP_PRICE, payment.payTo, payment.receipt.reference]);
  assert.ok(['signed', 'settled'].includes(rec.state), rec.state);
  const again = await agent.mpp.recordReceipt(payment.paymentId, response.headers.get('Payment-Receipt'));
  assert.equal(again.receipt.reference, payment.receipt.reference);
  const listed = [];
  for await (const p of agent.mpp.payments.list({ walletId: WALLET, pageSize: 2 })) listed.push(p.id);
  assert.ok(listed.includes(payment.paymentId));
});

test('payFetch: a resource offering both is paid once, by MPP by default and by x402 when preferred', async () => {
  const byDefault = await agent.payFetch(`${BOTH}/weather`, undefined, { walletId: WALLET });
  assert.equal(byDefault.response.status, 200, await byDefault.response.clone().text());
  assert.equal((await byDefault.response.json()).report, 'sunny');
  assert.deepEqual([byDefault.payment.protocol, byDefault.payment.amount, byDefault.payment.declined], ['mpp', MPP_PRICE, undefined]);
  assert.ok(byDefault.payment.receipt);
  const preferred = await agent.payFetch(`${BOTH}/weather`, undefined, { walletId: WALLET, prefer: 'x402' });
  assert.equal(preferred.response.status, 200, await preferred.response.clone().text());
  assert.deepEqual([preferred.payment.protocol, preferred.payment.amount], ['x402', X402_PRICE]);
  assert.equal(preferred.payment.settlement.success, true);
  assert.equal(preferred.payment.receipt, undefined);
});

test('payFetch: a parked MPP payment is a result with its approval; approved, the same call pays once', async () => {
  const parked = await agent.payFetch(`${MPP_SELLER}/weather`, undefined, { walletId: WALLET_PARKING });
  assert.equal(parked.response.status, 402);
  assert.equal(parked.payment.status, 'pending_approval');
  assert.equal(parked.payment.protocol, 'mpp');
  assert.match(parked.payment.approvalId, /^ap_/);
  assert.match(await parked.response.text(), /Payment Required/);
  await admin.approvals.approve(parked.payment.approvalId, 'payFetch test');
  const { response, payment } = await agent.payFetch(`${MPP_SELLER}/weather`, undefined, {
    walletId: WALLET_PARKING,
    approvalId: parked.payment.approvalId,
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(payment.status, 'paid');
  assert.equal((await agent.mpp.payments.get(payment.paymentId)).approval_id, parked.payment.approvalId);
});

test('payFetch: a seller outside the allowlist is a PaymentBlockedError naming MPP', async () => {
  const err = await agent.payFetch(`${MPP_SELLER}/weather`, undefined, { walletId: WALLET_ALLOW }).catch((e) => e);
  assert.ok(err instanceof PaymentBlockedError && err instanceof PermissionError, `got ${err}`);
  assert.deepEqual([err.reason, err.protocol], ['recipient_not_allowed', 'mpp']);
});

test('mpp.pay answers the credential the seller takes', async () => {
  const challenge = await fetch(`${MPP_SELLER}/weather`);
  assert.equal(challenge.status, 402);
  await challenge.body?.cancel();
  const payment = await agent.mpp.pay(WALLET, challenge.headers.get('www-authenticate'), `${MPP_SELLER}/weather`, { maxUsdc: MPP_PRICE });
  assert.match(payment.authorization, /^Payment /);
  const paid = await fetch(`${MPP_SELLER}/weather`, { headers: { [payment.header]: payment.authorization } });
  assert.equal(paid.status, 200, await paid.clone().text());
  const rec = await agent.mpp.recordReceipt(payment.paymentId, paid.headers.get('Payment-Receipt'));
  assert.equal(rec.receipt.status, 'success');
});

test('payFetch: a 402 without a challenge of either protocol is a PaymentChallengeError; only x402 an X402ChallengeError', async () => {
  const front = createServer((_req, res) => res.writeHead(402, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="x"' }).end('pay me'));
  await new Promise((r) => front.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${front.address().port}/`;
    const err = await agent.payFetch(url, undefined, { walletId: WALLET }).catch((e) => e);
    assert.ok(err instanceof PaymentChallengeError && !(err instanceof X402ChallengeError), `got ${err}`);
    const only = await agent.payFetch(url, undefined, { walletId: WALLET, only: 'x402' }).catch((e) => e);
    assert.ok(only instanceof X402ChallengeError, `got ${only}`);
    const bad = await agent.payFetch(url, undefined, { walletId: WALLET, prefer: 'tempo' }).catch((e) => e);
    assert.ok(bad instanceof TypeError, `got ${bad}`);
  } finally {
    front.close();
  }
});
