// An x402 payment's approval, and an MPP charge's, in a real browser: the
// page says what is bought (and, for MPP, the seller's realm and every
// recipient's share); approving grants it (nothing is signed then); the
// agent redeems the grant once with a fresh challenge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AGENT_KEY,
  ADMIN_KEY,
  api,
  assertNoConsoleErrors,
  BASE,
  chainUSDC,
  env,
  eventually,
  newAddress,
  owner,
  SHOTS,
  signedIn,
  USDC_MINT,
  useBrowser,
  WALLET_ID,
} from './lib.mjs';

useBrowser();

const challenge = (payTo, feePayer, amount) => ({
  x402Version: 2,
  resource: { url: 'https://seller.example/report', description: 'Quarterly report' },
  accepts: [
    {
      scheme: 'exact',
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      amount,
      asset: USDC_MINT,
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer },
    },
  ],
});

test('an x402 approval shows what it buys; approving it in the page grants one payment', async () => {
  const payTo = newAddress();
  const pay = (body) => api('POST', `/agents/${WALLET_ID}/x402/pay`, AGENT_KEY, body);
  const parked = await pay({ payment_required: challenge(payTo, newAddress(), '2000000') });
  assert.equal(parked.status, 202, JSON.stringify(parked.body));
  const id = parked.body.approval_id;

  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/approvals/${id}`);
  await p.getByText('Buys (x402)').waitFor();
  await p.getByText('https://seller.example/report', { exact: true }).waitFor();
  await p.getByText('Quarterly report', { exact: true }).waitFor();
  await p.screenshot({ path: `${SHOTS}approval-x402.png`, fullPage: true });
  await p.getByRole('button', { name: 'Approve…' }).click();
  await p.getByRole('button', { name: 'Confirm approval' }).click();
  await eventually('granted', async () => (await p.getByTestId('status').textContent()) === 'sent');

  const { body: a } = await api('GET', `/approvals/${id}`, ADMIN_KEY);
  assert.equal(a.kind, 'x402');
  assert.equal(a.signature, null);
  const { body: before } = await api('GET', `/x402/payments/${parked.body.payment_id}`, ADMIN_KEY);
  assert.equal(before.state, 'approved');

  // The seller's fresh challenge (another fee payer), redeemed once.
  const paid = await pay({ payment_required: challenge(payTo, newAddress(), '1500000'), approval_id: id });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(paid.body.status, 'signed');
  assert.equal(paid.body.header, 'PAYMENT-SIGNATURE');
  const again = await pay({ payment_required: challenge(payTo, newAddress(), '1500000'), approval_id: id });
  assert.equal(again.status, 422, JSON.stringify(again.body));
  assert.match(again.body.error, /already used/);
  assertNoConsoleErrors();
});

/**
 * charge is an MPP seller's 402 challenge (its WWW-Authenticate value): a
 * devnet USDC charge of amount base units to payTo, of which each split
 * [recipient, base units] goes to another recipient, the seller's fee
 * payer paying, under a fresh challenge id.
 */
const charge = (payTo, amount, splits) => {
  const request = {
    amount,
    currency: USDC_MINT,
    recipient: payTo,
    methodDetails: {
      network: 'devnet',
      decimals: 6,
      feePayer: true,
      feePayerKey: newAddress(),
      splits: splits.map(([recipient, share]) => ({ recipient, amount: share })),
    },
  };
  const b64 = (v) => Buffer.from(v).toString('base64url');
  const expires = new Date(Date.now() + 5 * 60_000).toISOString();
  return `Payment id="${b64(crypto.randomUUID())}", realm="forecasts.example", method="solana", intent="charge", description="Ten-day forecast", request="${b64(JSON.stringify(request))}", expires="${expires}"`;
};

test('an MPP charge’s approval shows what it buys, the seller’s realm and every recipient’s share; approving it in the page grants one payment', async () => {
  const [payTo, platform, referrer] = [newAddress(), newAddress(), newAddress()];
  const splits = [
    [platform, '250000'],
    [referrer, '50000'],
  ];
  const resource = 'https://forecasts.example/ten-days';
  const pay = (body) => api('POST', `/agents/${WALLET_ID}/mpp/pay`, AGENT_KEY, { resource, ...body });
  // 2 USDC, at the wallet's approval threshold: parked.
  const parked = await pay({ challenge: charge(payTo, '2000000', splits) });
  assert.equal(parked.status, 202, JSON.stringify(parked.body));
  const id = parked.body.approval_id;

  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/approvals/${id}`);
  await p.getByText('Buys (MPP)').waitFor();
  await p.getByText(resource, { exact: true }).waitFor();
  await p.getByText('forecasts.example', { exact: true }).waitFor();
  await p.getByText('Ten-day forecast', { exact: true }).waitFor();
  const payment = p.getByRole('region', { name: 'Payment' });
  assert.match(await payment.getByRole('heading', { level: 1 }).textContent(), /^2\.00 USDC\s*to \S+ and 2 more$/);
  // The recipient gets what the splits leave of the 2 USDC.
  const shares = [`1.70 USDC to the recipient ${payTo}`, `0.25 USDC to ${platform}`, `0.05 USDC to ${referrer}`];
  assert.deepEqual(await payment.getByRole('list', { name: 'Split among 3 recipients' }).getByRole('listitem').allTextContents(), shares);
  await p.screenshot({ path: `${SHOTS}approval-mpp.png`, fullPage: true });
  await p.getByRole('button', { name: 'Approve…' }).click();
  // The confirmation lists every recipient with its share again.
  const confirm = p.getByRole('alertdialog', { name: 'Confirm approval' });
  const confirmed = confirm.getByRole('list', { name: 'Split among 3 recipients' });
  await confirmed.waitFor();
  assert.deepEqual(await confirmed.getByRole('listitem').allTextContents(), shares);
  await p.screenshot({ path: `${SHOTS}approval-mpp-confirm.png` });
  await confirm.getByRole('button', { name: 'Confirm approval' }).click();
  await eventually('granted', async () => (await p.getByTestId('status').textContent()) === 'sent');

  const { body: a } = await api('GET', `/approvals/${id}`, ADMIN_KEY);
  assert.equal(a.kind, 'mpp');
  assert.equal(a.realm, 'forecasts.example');
  assert.equal(a.signature, null);
  const { body: before } = await api('GET', `/mpp/payments/${parked.body.payment_id}`, ADMIN_KEY);
  assert.equal(before.state, 'approved');

  // The seller's fresh challenge for the same terms, redeemed once.
  const paid = await pay({ challenge: charge(payTo, '2000000', splits), approval_id: id });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(paid.body.status, 'signed');
  assert.equal(paid.body.header, 'Authorization');
  const again = await pay({ challenge: charge(payTo, '2000000', splits), approval_id: id });
  assert.equal(again.status, 422, JSON.stringify(again.body));
  assert.match(again.body.error, /already used/);
  assertNoConsoleErrors();
});

test('approved in the page, a purchase from the official x402 seller is bought once', async () => {
  const seller = env('SELLER_URL'); // @x402/express with the packages' own facilitator, on the localnet
  const challengeOf = async () => {
    const res = await fetch(`${seller}/premium`);
    assert.equal(res.status, 402);
    return JSON.parse(Buffer.from(res.headers.get('payment-required'), 'base64').toString());
  };
  const pay = (body) => api('POST', `/agents/${WALLET_ID}/x402/pay`, AGENT_KEY, body);
  const first = await challengeOf();
  const { payTo, amount } = first.accepts[0];
  const parked = await pay({ payment_required: first });
  assert.equal(parked.status, 202, JSON.stringify(parked.body)); // at the wallet's threshold
  const id = parked.body.approval_id;

  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/approvals/${id}`);
  await p.getByText(`${seller}/premium`, { exact: true }).waitFor();
  await p.getByText('Premium weather report', { exact: true }).waitFor();
  await p.getByRole('button', { name: 'Approve…' }).click();
  await p.getByRole('button', { name: 'Confirm approval' }).click();
  await eventually('granted', async () => (await p.getByTestId('status').textContent()) === 'sent');
  await p.context().close();

  // The agent retries with the grant and the seller's fresh challenge,
  // and the seller's facilitator verifies and settles the payment.
  const before = await chainUSDC(payTo);
  const paid = await pay({ payment_required: await challengeOf(), approval_id: id });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  const res = await fetch(`${seller}/premium`, { headers: { [paid.body.header]: paid.body.payment_signature } });
  assert.equal(res.status, 200, await res.text());
  assert.ok(res.headers.get('payment-response'), 'the seller answers its settlement');
  assert.equal((await chainUSDC(payTo)) - before, Number(amount), 'the seller was paid the price once');

  const again = await pay({ payment_required: await challengeOf(), approval_id: id });
  assert.equal(again.status, 422, JSON.stringify(again.body));
  assert.match(again.body.error, /already used/);
  assert.equal((await chainUSDC(payTo)) - before, Number(amount));
  assertNoConsoleErrors();
});
