// The dashboard in a real browser (Debian's Chromium driven by
// playwright-core), against the running service the Go test started: it
// passes the URLs, keys and the users' wallet seeds in the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import nacl from 'tweetnacl';
import {
  addressOf,
  ADMIN_KEY,
  amountText,
  api,
  approver,
  assertNoConsoleErrors,
  BASE,
  chainUSDC,
  eventually,
  newAddress,
  owner,
  page,
  park,
  SHOTS,
  sideways,
  signedIn,
  signIn,
  stranger,
  useBrowser,
  usdcText,
  viewer,
  WALLET_ID,
} from './lib.mjs';

useBrowser();

test('sign in with the wallet, approve a parked payment through the page: the recipient is paid exactly once', async () => {
  const { id, to } = await park(2, 'invoice 77');
  const p = await signedIn(owner);
  await p.getByRole('link', { name: /^Approvals/ }).click();
  await p.screenshot({ path: `${SHOTS}inbox.png`, fullPage: true });
  await p.locator(`[data-approval="${id}"]`).getByRole('link', { name: 'Review' }).click();
  await p.getByText('First payment to this address').waitFor();
  await p.getByText('invoice 77').first().waitFor();
  await p.getByTestId('payload').waitFor();
  await p.getByRole('heading', { name: 'What approving does now' }).waitFor();
  await p.screenshot({ path: `${SHOTS}approval.png`, fullPage: true });
  await p.getByLabel('Note (optional)').fill('checked the invoice');
  await p.getByRole('button', { name: 'Approve…' }).click();
  await p.getByRole('button', { name: 'Confirm approval' }).click();
  await p.getByTestId('signature').waitFor();
  assert.equal(await p.getByTestId('status').textContent(), 'sent');
  await p.screenshot({ path: `${SHOTS}approved.png`, fullPage: true });
  assert.equal(await eventually('the transfer on chain', async () => (await chainUSDC(to)) || false), 2_000_000);
  const { body } = await api('GET', `/approvals/${id}`, ADMIN_KEY);
  assert.equal(body.status, 'sent');
  assert.match(body.approved_by, /^user:/);
  assert.equal(body.note, 'checked the invoice');
  // Approving again is refused by the API (409): nothing is paid twice.
  assert.equal((await api('POST', `/approvals/${id}/approve`, ADMIN_KEY)).status, 409);
  assert.equal(await chainUSDC(to), 2_000_000);
});

test('reject with a note', async () => {
  const { id, to } = await park(3, 'reject me');
  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/approvals/${id}`); // its own URL
  await p.getByLabel('Note (optional)').fill('not this vendor');
  await p.getByRole('button', { name: 'Reject' }).click();
  await eventually('rejected', async () => (await p.getByTestId('status').textContent()) === 'rejected');
  const { body } = await api('GET', `/approvals/${id}`, ADMIN_KEY);
  assert.equal(body.status, 'rejected');
  assert.equal(body.note, 'not this vendor');
  assert.match(body.rejected_by, /^user:/);
  assert.equal(await chainUSDC(to), 0);
});

test('a viewer sees no buttons, and the API refuses its approve', async () => {
  const { id } = await park(1.5, 'viewer look');
  const p = await signedIn(viewer);
  await p.goto(`${BASE}/dashboard/approvals/${id}`);
  await p.getByText('can read approvals but not decide them').waitFor();
  assert.equal(await p.getByRole('button', { name: 'Approve…' }).count(), 0);
  assert.equal(await p.getByRole('button', { name: 'Reject' }).count(), 0);
  // The page's own session, straight to the API: 403.
  const status = await p.evaluate(async (id) => {
    const s = await (await fetch('/api/dashboard/v1/session')).json();
    const r = await fetch(`/api/public/v1/approvals/${id}/approve`, { method: 'POST', headers: { 'X-CSRF-Token': s.csrf_token } });
    return r.status;
  }, id);
  assert.equal(status, 403);
  await p.screenshot({ path: `${SHOTS}viewer.png`, fullPage: true });
});

test('a new approval appears by itself within 5 s, with the count', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: /^Approvals/ }).click();
  const count = async () => Number(await p.locator('.count').textContent()); // NaN while loading
  const before = await eventually('the count', async () => {
    const n = await count();
    return Number.isNaN(n) ? false : { n };
  });
  const { id } = await park(1.25, 'live update');
  await p.locator(`[data-approval="${id}"]`).waitFor({ timeout: 5000 });
  await eventually('the count', async () => (await count()) === before.n + 1, 5000);
});

test('refusals: an address that is no user, and a message for another domain', async () => {
  const p = await page(stranger);
  await p.goto(`${BASE}/dashboard/`);
  await p.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await p.getByRole('alert').getByText('no user of any account').waitFor();
  await p.screenshot({ path: `${SHOTS}signin-refused.png` });
  const q = await page(owner, { knobs: { domain: 'evil.example' } });
  await q.goto(`${BASE}/dashboard/`);
  await q.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
  await q.getByRole('alert').getByText('not this sign-in request').waitFor();
  // The fallback (connect + signMessage of the same text) signs in too.
  const r = await page(owner, { knobs: { noSignIn: true, name: 'Plain Wallet' } });
  await signIn(r, 'Plain Wallet');
});

test('usable at phone width (375 px) and by keyboard', async () => {
  const { id } = await park(1.1, 'phone');
  const p = await signedIn(owner, { width: 375, height: 740 });
  await p.goto(`${BASE}/dashboard/approvals/${id}`);
  await p.getByRole('button', { name: 'Approve…' }).waitFor();
  const overflow = await sideways(p);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 375 px`);
  await p.screenshot({ path: `${SHOTS}phone.png`, fullPage: true });
  // Keyboard: Tab reaches the Reject button and Enter presses it.
  for (let i = 0; i < 30; i++) {
    await p.keyboard.press('Tab');
    if ((await p.evaluate(() => document.activeElement?.textContent)) === 'Reject') break;
  }
  await p.keyboard.press('Enter');
  await eventually('rejected by keyboard', async () => (await p.getByTestId('status').textContent()) === 'rejected');
});

test('an approver approves a payment with the keyboard only: Tab, Enter and Space', async () => {
  const { id, to } = await park(1.3, 'keyboard only');
  const p = await signedIn(approver);
  await p.goto(`${BASE}/dashboard/approvals`);
  await p.locator(`[data-approval="${id}"]`).waitFor();
  /** tabTo presses Tab until the focused element is the one wanted. */
  const tabTo = async (what, is) => {
    for (let i = 0; i < 60; i++) {
      await p.keyboard.press('Tab');
      if (await p.evaluate(is)) return;
    }
    assert.fail(`Tab never reached ${what}`);
  };
  // The inbox: its Review link opens the approval.
  await tabTo('the Review link', `document.activeElement?.closest('[data-approval="${id}"]') && document.activeElement.textContent === 'Review'`);
  await p.keyboard.press('Enter');
  await p.waitForURL(`**/dashboard/approvals/${id}`);
  await p.getByRole('button', { name: 'Approve…' }).waitFor();
  // Approve… opens the confirmation, whose confirming button takes the focus; Space presses it.
  await tabTo('Approve…', () => document.activeElement?.textContent === 'Approve…');
  await p.keyboard.press('Enter');
  const dialog = p.getByRole('alertdialog', { name: 'Confirm approval' });
  await dialog.waitFor();
  await eventually('the confirmation focused', () => p.evaluate(() => document.activeElement?.textContent === 'Confirm approval'));
  await p.keyboard.press('Space');
  await eventually('approved', async () => ['signing', 'sent'].includes(await p.getByTestId('status').textContent()));
  // The result is announced (a toast in a live region), and on chain.
  await p.locator('[data-toast="ok"]').filter({ hasText: 'Approved' }).waitFor();
  assert.equal(await eventually('the transfer on chain', async () => (await chainUSDC(to)) || false, 20000), 1_300_000);
  await p.context().close();
});

test('an address in two accounts switches between them, and the page says which network it is on', async () => {
  const p = await signedIn(owner);
  await p.getByRole('status').getByText('Devnet: test tokens').waitFor();
  await p.getByRole('link', { name: /^Approvals/ }).click();
  const account = p.getByLabel('Account');
  const options = await account.locator('option').allTextContents();
  assert.equal(options.length, 2, options.join(', '));
  const live = options.find((o) => o.startsWith('mainnet'));
  await account.selectOption({ label: live });
  await p.getByRole('status').getByText('Mainnet: real money').waitFor();
  // Nothing of the devnet account stays on screen.
  await p.getByText('Nothing waits for a decision.').waitFor({ timeout: 3000 });
  assert.equal(await p.locator('[data-approval]').count(), 0);
  await p.screenshot({ path: `${SHOTS}mainnet.png` });
});

test('the audit log: entries as the API has them, filtered, with the chain verified through the newest entry', async () => {
  const p = await signedIn(viewer);
  await p.getByRole('link', { name: 'Audit log' }).click();
  const chain = (await api('GET', '/audit-log/verification', ADMIN_KEY)).body;
  assert.ok(chain.intact, JSON.stringify(chain));
  // The page verified when it opened; entries added since (this sign-in) may be past it.
  const status = await p.getByRole('status').filter({ hasText: 'Chain verified through entry' }).textContent();
  const shown = Number(status.match(/entry (\d+)/)[1]);
  assert.ok(shown > 0 && shown <= chain.verified_through_seq, status);

  const newest = (await api('GET', '/audit-log?limit=1', ADMIN_KEY)).body.entries[0];
  await p.locator(`tr[data-seq="${newest.seq}"]`).waitFor();
  assert.equal(await p.locator('tbody tr').first().getAttribute('data-seq'), String(newest.seq));

  await p.getByLabel('Action').fill('session.signed_in');
  await p.getByRole('button', { name: 'Filter' }).click();
  await eventually('only sign-ins', async () => {
    const actions = await p.locator('tbody tr td:nth-child(4)').allTextContents();
    return actions.length > 0 && actions.every((a) => a === 'session.signed_in');
  });
  await p.locator('tbody tr').first().getByRole('button', { name: 'Show' }).click();
  await p.locator('tbody tr pre').first().waitFor();
  await p.getByRole('button', { name: 'Verify again' }).click();
  await p.screenshot({ path: `${SHOTS}audit.png`, fullPage: true });

  await p.setViewportSize({ width: 375, height: 800 });
  const overflow = await sideways(p);
  assert.equal(overflow, 0, 'horizontal scroll at 375 px');
  await p.screenshot({ path: `${SHOTS}audit-phone.png`, fullPage: true });
  await p.context().close();
});

test('analytics: the tables beside the charts have the numbers of the API', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Analytics' }).click();
  const a = (await api('GET', '/analytics', ADMIN_KEY)).body;
  assert.ok(a.spend.length > 0 && a.approvals.length > 0, JSON.stringify(a));
  const rows = async (name) => {
    const t = p.getByRole('table', { name });
    await t.waitFor();
    return t.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  };
  const label = Object.fromEntries(a.wallets.map((w) => [w.id, w]));
  assert.deepEqual(
    await rows('Spend per day'),
    a.spend.map((s) => [
      s.day,
      label[s.wallet_id].label,
      amountText(s.amount_usdc),
      String(s.transactions),
      s.x402_payments > 0 ? `${s.x402_payments} · ${usdcText(s.x402_amount_usdc)}` : '—',
      s.mpp_payments > 0 ? `${s.mpp_payments} · ${usdcText(s.mpp_amount_usdc)}` : '—',
      (s.fee_lamports / 1e9).toLocaleString('en-US', { maximumFractionDigits: 9 }),
      amountText(label[s.wallet_id].daily_limit_usdc),
    ]),
  );
  assert.deepEqual(
    (await rows('Approvals per day')).map((r) => r.slice(0, 4)),
    a.approvals.map((x) => [x.day, String(x.approved), String(x.rejected), String(x.expired)]),
  );
  if (a.blocked.length > 0)
    assert.deepEqual(
      (await rows('Blocked sends by rule')).map((r) => r.slice(0, 2)),
      a.blocked.map((b) => [b.reason, String(b.count)]),
    );
  // The chart (Chart.js draws on a canvas) paints each wallet in the colour of its row's swatch.
  const swatches = await p
    .getByRole('table', { name: 'Spend per day' })
    .locator('.swatch')
    .evaluateAll((s) => [...new Set(s.map((e) => getComputedStyle(e).backgroundColor))]);
  assert.equal(swatches.length, a.wallets.length);
  const chart = p.getByRole('img', { name: 'Spend per day, stacked by wallet' });
  await eventually('every wallet painted in the chart', async () => {
    const painted = await chart.evaluate((canvas, colours) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      const seen = new Set();
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 255) seen.add(`rgb(${data[i]}, ${data[i + 1]}, ${data[i + 2]})`);
      return colours.filter((c) => seen.has(c));
    }, swatches);
    return painted.length === swatches.length;
  });
  await p.screenshot({ path: `${SHOTS}analytics.png`, fullPage: true });

  // Another range: yesterday only has nothing.
  const yesterday = new Date(Date.now() - 86400000).toISOString().slice(0, 10);
  await p.getByLabel('From', { exact: true }).fill(yesterday);
  await p.getByLabel('To', { exact: true }).fill(yesterday);
  await p.getByRole('button', { name: 'Show', exact: true }).click();
  await p.getByText('No sends in this range.').waitFor();

  await p.setViewportSize({ width: 375, height: 800 });
  await p.getByLabel('From', { exact: true }).fill('');
  await p.getByLabel('To', { exact: true }).fill('');
  await p.getByRole('button', { name: 'Show', exact: true }).click();
  await p.getByRole('table', { name: 'Spend per day' }).waitFor();
  const overflow = await sideways(p);
  assert.equal(overflow, 0, 'horizontal scroll at 375 px');
  await p.screenshot({ path: `${SHOTS}analytics-phone.png`, fullPage: true });
  await p.context().close();
});

test('users: an owner adds a person by address, changes the role and removes them; the last owner stays; a viewer only reads', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Users', exact: true }).click();
  const person = newAddress();
  const form = p.getByRole('form', { name: 'Add a user' });
  await form.getByLabel('Address').fill(person.slice(0, 20));
  assert.ok(await form.getByRole('button', { name: 'Add user' }).isDisabled(), 'a short address can be added');
  await form.getByLabel('Address').fill(person);
  await form.getByLabel('Role').selectOption('viewer');
  await form.getByRole('button', { name: 'Add user' }).click();
  await p.locator(`tr[data-address="${person}"]`).waitFor();
  const roleOf = async (a) => (await api('GET', '/users', ADMIN_KEY)).body.users.find((u) => u.address === a)?.role;
  assert.equal(await roleOf(person), 'viewer');

  await p.getByLabel(`Role of ${person}`).selectOption('approver');
  await eventually('the role changed', async () => (await roleOf(person)) === 'approver');
  await p.screenshot({ path: `${SHOTS}users.png`, fullPage: true });

  const row = p.locator(`tr[data-address="${person}"]`);
  await row.getByRole('button', { name: 'Remove' }).click();
  await p.getByRole('alertdialog').getByRole('button', { name: 'Confirm removal' }).click();
  await row.waitFor({ state: 'detached' });
  assert.equal(await roleOf(person), undefined);

  // An owner who made a key in the dashboard takes it with them: the
  // removal says so and revokes it.
  const maker = nacl.sign.keyPair();
  const makerAddress = addressOf(maker);
  // No API key adds an owner: an owner does, in the dashboard.
  assert.equal((await api('POST', '/users', ADMIN_KEY, { address: makerAddress, role: 'owner' })).status, 403);
  await form.getByLabel('Address').fill(makerAddress);
  await form.getByLabel('Role').selectOption('owner');
  await form.getByRole('button', { name: 'Add user' }).click();
  await p.locator(`tr[data-address="${makerAddress}"]`).waitFor();
  assert.equal(await roleOf(makerAddress), 'owner');
  const m = await signedIn(maker);
  await m.getByRole('link', { name: 'Keys', exact: true }).click();
  await m.getByRole('form', { name: 'Create a key' }).getByRole('button', { name: 'Create key' }).click();
  const made = m.getByRole('dialog', { name: 'New key' });
  const makerKey = await made.getByTestId('new-key').textContent();
  await made.getByRole('button', { name: 'Done' }).click();
  await m.context().close();
  assert.equal((await api('GET', '/agents', makerKey)).status, 200);
  await p.reload();
  const makerRow = p.locator(`tr[data-address="${makerAddress}"]`);
  await makerRow.getByRole('button', { name: 'Remove' }).click();
  await p.getByRole('alertdialog').getByText('Also revokes the API key they made').waitFor();
  await p.getByRole('alertdialog').getByRole('button', { name: 'Confirm removal' }).click();
  await makerRow.waitFor({ state: 'detached' });
  assert.equal((await api('GET', '/agents', makerKey)).status, 401, "the removed owner's key still works");

  const users = (await api('GET', '/users', ADMIN_KEY)).body.users;
  const me = addressOf(owner);
  if (users.filter((u) => u.role === 'owner').length === 1) {
    await p.getByLabel(`Role of ${me}`).selectOption('viewer');
    await p.getByRole('alert').filter({ hasText: 'owner' }).waitFor();
    assert.equal(await roleOf(me), 'owner');
  }
  await p.context().close();

  const v = await signedIn(viewer);
  await v.getByRole('link', { name: 'Users', exact: true }).click();
  await v.locator(`tr[data-address="${me}"]`).waitFor();
  assert.equal(await v.getByRole('form', { name: 'Add a user' }).count(), 0);
  assert.equal(await v.getByRole('button', { name: 'Remove' }).count(), 0);
  assert.equal(await v.getByRole('combobox').count(), 0);
  await v.setViewportSize({ width: 375, height: 800 });
  const overflow = await sideways(v);
  assert.equal(overflow, 0, 'horizontal scroll at 375 px');
  await v.screenshot({ path: `${SHOTS}users-viewer-phone.png`, fullPage: true });
  await v.context().close();
});

test('keys: an owner creates a scoped key shown once that works, rotates it and revokes the successor; a viewer only reads', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Keys', exact: true }).click();
  const form = p.getByRole('form', { name: 'Create a key' });
  await form.getByLabel('Label').fill('browser bot');
  await form.locator('fieldset input[type=checkbox]').first().waitFor();
  const boxes = form.locator('fieldset label');
  const n = await boxes.count();
  for (let i = 0; i < n; i++) {
    if ((await boxes.nth(i).locator('code').textContent()) === WALLET_ID.slice(0, 8)) await boxes.nth(i).locator('input').check();
  }
  await form.getByRole('button', { name: 'Create key' }).click();
  const shown = async () => {
    const d = p.getByRole('dialog', { name: 'New key' });
    await d.waitFor();
    const key = await d.getByTestId('new-key').textContent();
    await d.getByRole('button', { name: 'Done' }).click();
    await d.waitFor({ state: 'detached' });
    return key;
  };
  const first = await shown();
  const listed = await api('GET', '/agents', first);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.deepEqual(
    listed.body.agents.map((a) => a.id),
    [WALLET_ID],
    'the scoped key reaches only its wallet',
  );
  assert.equal(await p.getByTestId('new-key').count(), 0, 'the key stays on the page');

  const keys = (await api('GET', '/keys?limit=100', ADMIN_KEY)).body.keys;
  const made = keys.find((k) => k.label === 'browser bot' && !k.revoked_at);
  assert.deepEqual([made.role, made.wallet_ids, made.created_by], ['agent', [WALLET_ID], `user:${addressOf(owner)}`]);
  const row = p.locator(`tr[data-key="${made.id}"]`);
  assert.equal(await row.getByTestId('made-by').textContent(), 'you');
  await row.getByRole('button', { name: 'Rotate' }).click();
  await p.getByRole('alertdialog').getByRole('button', { name: 'Confirm rotate' }).click();
  const second = await shown();
  assert.equal((await api('GET', '/agents', first)).status, 401, 'the rotated key still works');
  assert.equal((await api('GET', '/agents', second)).status, 200);
  await p.screenshot({ path: `${SHOTS}keys.png`, fullPage: true });

  const successor = (await api('GET', '/keys?limit=100', ADMIN_KEY)).body.keys.find((k) => k.label === 'browser bot' && !k.revoked_at);
  const next = p.locator(`tr[data-key="${successor.id}"]`);
  await next.getByRole('button', { name: 'Revoke' }).click();
  await p.getByRole('alertdialog').getByRole('button', { name: 'Confirm revoke' }).click();
  await next.getByText('revoked').waitFor();
  assert.equal((await api('GET', '/agents', second)).status, 401, 'the revoked key still works');
  await p.context().close();

  const v = await signedIn(viewer);
  await v.getByRole('link', { name: 'Keys', exact: true }).click();
  await v.locator(`tr[data-key="${successor.id}"]`).waitFor();
  assert.equal(await v.getByRole('form', { name: 'Create a key' }).count(), 0);
  assert.equal(await v.getByRole('button', { name: /Rotate|Revoke/ }).count(), 0);
  await v.setViewportSize({ width: 375, height: 800 });
  const overflow = await sideways(v);
  assert.equal(overflow, 0, 'horizontal scroll at 375 px');
  await v.context().close();
});

test('transactions: the rows are those of the API, filters narrow them, and a paid approval links back to its page', async () => {
  const p = await signedIn(viewer);
  await p.getByRole('link', { name: 'Transactions', exact: true }).click();
  const all = (await api('GET', '/transactions?limit=50', ADMIN_KEY)).body.transactions;
  assert.ok(all.length > 0);
  await p.getByRole('table', { name: 'Transactions' }).waitFor();
  const shown = () => p.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.signature));
  assert.deepEqual(
    await shown(),
    all.map((t) => t.signature),
  );
  // Each row's network fee is the API's fee_lamports in SOL.
  const fees = await p.locator('tbody tr td:nth-child(4)').allTextContents();
  assert.deepEqual(
    fees,
    all.map((t) => (t.fee_lamports == null ? '—' : `${(t.fee_lamports / 1e9).toLocaleString('en-US', { maximumFractionDigits: 9 })} SOL`)),
  );

  // The first row's status: a filter that keeps at least one row.
  const status = all[0].status;
  const some = (await api('GET', `/transactions?limit=50&status=${status}`, ADMIN_KEY)).body.transactions;
  await p.getByLabel('Status').selectOption(status);
  await p.getByRole('button', { name: 'Filter' }).click();
  await eventually(`only ${status}`, async () => JSON.stringify(await shown()) === JSON.stringify(some.map((t) => t.signature)));
  await p.screenshot({ path: `${SHOTS}transactions.png`, fullPage: true });

  const yesterday = new Date(Date.now() - 86400000).toISOString().slice(0, 10);
  await p.getByLabel('Until').fill(yesterday);
  await p.getByRole('button', { name: 'Filter' }).click();
  await p.getByText('No transactions.').waitFor();

  await p.getByLabel('Until').fill('');
  await p.getByLabel('Status').selectOption('');
  await p.getByRole('button', { name: 'Filter' }).click();
  const paid = all.find((t) => t.approval_id);
  assert.ok(paid, 'a transaction from an approval');
  await p.locator(`tr[data-signature="${paid.signature}"]`).getByRole('link', { name: 'Approval' }).click();
  await p.waitForURL(`**/dashboard/approvals/${paid.approval_id}`);
  await p.getByText(paid.signature).first().waitFor();
  await p.context().close();
});

test('no console errors on any page', assertNoConsoleErrors);
