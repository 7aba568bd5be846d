// An x402 payment's approval in a real browser: the page says what is
// bought; approving grants it (nothing is signed then); the agent redeems
// the grant once with a fresh challenge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AGENT_KEY, ADMIN_KEY, api, assertNoConsoleErrors, BASE, eventually, newAddress, owner, page, SHOTS, signIn, USDC_MINT, useBrowser, WALLET_ID } from './lib.mjs';

useBrowser();

const challenge = (payTo, feePayer, amount) => ({
  x402Version: 2,
  resource: { url: 'https://seller.example/report', description: 'Quarterly report' },
  accepts: [{
    scheme: 'exact', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', amount, asset: USDC_MINT, payTo,
    maxTimeoutSeconds: 60, extra: { feePayer },
  }],
});

test('an x402 approval shows what it buys; approving it in the page grants one payment', async () => {
  const payTo = newAddress();
  const pay = (body) => api('POST', `/agents/${WALLET_ID}/x402/pay`, AGENT_KEY, body);
  const parked = await pay({ payment_required: challenge(payTo, newAddress(), '2000000') });
  assert.equal(parked.status, 202, JSON.stringify(parked.body));
  const id = parked.body.approval_id;

  const p = await page(owner);
  await signIn(p);
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
