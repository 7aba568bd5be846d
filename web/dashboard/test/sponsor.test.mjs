// Fee sponsorship on the overview: with it on, the fee payer's card
// (address, SOL, today's spend against the budget) stands in for the
// per-wallet "low on SOL" list, and warns when the fee payer runs low.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN_KEY,
  api,
  assertNoConsoleErrors,
  eventually,
  newAddress,
  owner,
  page,
  rpc,
  SHOTS,
  sideways,
  signIn,
  USDC_MINT,
  useBrowser,
  viewer,
} from './lib.mjs';

useBrowser();

const num = (n, digits) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const sol = (n) => `${num(n, 9)} SOL`;

/** feePayer is GET /fee-payer as the admin key reads it. */
async function feePayer() {
  const r = await api('GET', '/fee-payer', ADMIN_KEY);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('sponsorship on: the fee payer card replaces the low-SOL list, warns when low, and counts a sponsored send', async () => {
  const p = await page(owner);
  try {
    await signIn(p);
    const lowList = p.locator('[data-section="low-sol"]');
    await lowList.waitFor();
    // Off: the per-wallet list, and an owner may turn sponsorship on.
    await lowList.getByRole('button', { name: 'Turn on fee sponsorship' }).click();
    const card = p.locator('[data-section="fee-payer"]');
    await card.waitFor({ timeout: 15000 });
    assert.equal(await lowList.count(), 0);
    const fp = await feePayer();
    assert.equal(fp.enabled, true);
    assert.equal(await card.locator('[data-field="fee-payer-address"]').getAttribute('title'), fp.address);
    // A new fee payer holds no SOL: below one day's budget, it warns.
    assert.equal(fp.low, true);
    await card.getByRole('heading', { name: '⚠ Fee payer low on SOL' }).waitFor();
    assert.match(await card.locator('[data-field="fee-payer-warning"]').textContent(), new RegExp(fp.address));
    assert.equal((await card.locator('[data-field="fee-payer-sol"]').textContent()).trim(), '0 SOL');
    await p.screenshot({ path: `${SHOTS}overview-fee-payer-low.png`, fullPage: true });

    // Funded on the local chain from the card: no more warning.
    await card.getByLabel('Fund on localnet (SOL)').fill('2');
    await card.getByRole('form', { name: 'Fund the fee payer on localnet' }).getByRole('button', { name: 'Fund' }).click();
    await card.getByRole('heading', { name: 'Fee payer', exact: true }).waitFor({ timeout: 15000 });
    assert.equal((await card.locator('[data-field="fee-payer-sol"]').textContent()).trim(), '2 SOL');
    assert.equal(await card.locator('[data-field="fee-payer-warning"]').count(), 0);

    // A wallet with USDC and no SOL sends; the card counts what the fee payer paid.
    const made = await api('POST', '/agents', ADMIN_KEY, { label: 'sponsored-no-sol' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await rpc('surfnet_setTokenAccount', [made.body.pubkey, USDC_MINT, { amount: 5_000_000 }]);
    const sent = await api('POST', `/agents/${made.body.id}/send`, ADMIN_KEY, { to: newAddress(), amount: 1 });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const after = await feePayer();
    assert.equal(after.transactions_today, 1);
    assert.ok(after.spent_today_sol > 0.002, `spent ${after.spent_today_sol}: the fee and a token account's rent`);
    await p.getByRole('button', { name: 'Refresh', exact: true }).click();
    const spend = card.locator('[data-field="fee-payer-spend"]');
    await eventually(
      'the send in the fee payer spend',
      async () => (await spend.textContent()).startsWith(`${sol(after.spent_today_sol)} of ${sol(fp.daily_budget_sol)} today (1 transaction)`),
      15000,
    );
    assert.equal(
      await card.getByRole('meter', { name: 'Fee payer: spend today against the daily budget' }).getAttribute('aria-valuenow'),
      String(after.spent_today_sol),
    );
    // The wallet's own 0 SOL is no warning while it is sponsored.
    const wallet = p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${made.body.id}"] [data-field="sol"]`);
    await wallet.filter({ hasText: '0 SOL' }).waitFor({ timeout: 15000 });
    assert.equal(await wallet.getAttribute('class'), null);
    await p.screenshot({ path: `${SHOTS}overview-fee-payer.png`, fullPage: true });

    // The budget from the card: a lower one than the day's spend turns the meter full.
    await card.getByLabel('Daily budget (SOL)').fill('0.001');
    await card.getByRole('form', { name: 'Daily budget' }).getByRole('button', { name: 'Save' }).click();
    await eventually('the new budget', async () => (await feePayer()).daily_budget_sol === 0.001);
    await card.locator('.ov-meter.full').waitFor({ timeout: 15000 });
    // Now its 2 SOL is above one day's budget, and a send is over it.
    const over = await api('POST', `/agents/${made.body.id}/send`, ADMIN_KEY, { to: newAddress(), amount: 1 });
    assert.equal(over.status, 503, JSON.stringify(over.body));
    assert.equal(over.body.reason, 'fee_payer_budget_exceeded');

    // At phone width the card fits.
    await p.setViewportSize({ width: 375, height: 740 });
    assert.equal(await sideways(p), 0);
    await p.setViewportSize({ width: 1200, height: 900 });

    // Off again from the card: the per-wallet list is back, and flags the wallet without SOL.
    await card.getByRole('button', { name: 'Turn off fee sponsorship' }).click();
    await lowList.locator(`[data-wallet="${made.body.id}"]`).waitFor({ timeout: 15000 });
    assert.equal(await card.count(), 0);
  } finally {
    await api('PUT', '/fee-payer', ADMIN_KEY, { enabled: false });
    await p.context().close();
  }
});

test('a viewer sees the fee payer card without its controls', async () => {
  const on = await api('PUT', '/fee-payer', ADMIN_KEY, { enabled: true, daily_budget_sol: 1 });
  assert.equal(on.status, 200, JSON.stringify(on.body));
  const p = await page(viewer);
  try {
    await signIn(p);
    const card = p.locator('[data-section="fee-payer"]');
    await card.waitFor({ timeout: 15000 });
    assert.equal(await card.getByRole('button').count(), 0);
    assert.equal(await card.getByRole('form').count(), 0);
    assert.equal(await card.locator('[data-field="fee-payer-address"]').getAttribute('title'), on.body.address);
  } finally {
    await api('PUT', '/fee-payer', ADMIN_KEY, { enabled: false });
    await p.context().close();
  }
});

test('no console errors with fee sponsorship', assertNoConsoleErrors);
