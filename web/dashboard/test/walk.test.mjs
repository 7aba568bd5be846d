// A walk through every page of the dashboard at desktop and phone width,
// as the owner of an account of its own that it first fills through the
// API: each page loads without a console error, without scrolling sideways
// and without a serious or critical axe-core finding, in the light and the
// dark colour scheme, and leaves a screenshot of each (test/screenshots/walk/;
// make screenshots copies them to docs/screenshots/). At phone width nothing
// sticks out of the page and every control is big enough for a finger.
// The Go test runs the deposit watcher beside it: a deposit into a wallet
// shows on its page (its transactions, its balance over time).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import {
  AGENT_KEY,
  amountText,
  axeFindings,
  api,
  asSession,
  assertNoConsoleErrors,
  BASE,
  coOwner,
  demo,
  DEMO_KEY,
  depositToken,
  depositUSDC,
  EURC_MINT,
  addressOf,
  env,
  eventually,
  newAddress,
  owner,
  page,
  SHOTS,
  phoneProblems,
  sideways,
  signedIn,
  signIn,
  useBrowser,
  usdcText,
  WALLET_ID,
} from './lib.mjs';

useBrowser();

const WALK = `${SHOTS}walk/`;
mkdirSync(WALK, { recursive: true });

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end('ok'));
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
after(() => receiver.close());

const WIDTHS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 375, height: 740 },
];

/** ok calls the API with the demo account's key and wants the status (or one of them). */
async function ok(status, method, path, body, key = DEMO_KEY) {
  const r = await api(method, path, key, body);
  assert.ok([status].flat().includes(r.status), `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** deposit is the USDC a customer paid into research-bot from outside (team makes it). */
let deposit;
/** euros is the EURC another customer paid into research-bot from outside, after deposit (team makes it). */
let euros;
/** exportable is the wallet whose secret two owners export (support-agent; team makes it). */
let exportable;

/**
 * team fills the walk's own account as a small team would: three agents
 * with funds and policies (an address book among them), payments sent,
 * one waiting, one approved, one rejected, one blocked, a frozen wallet,
 * a deposit from outside, a webhook endpoint with its deliveries, people
 * and keys. It answers the pages to visit.
 */
async function team() {
  const vendor = newAddress();
  const cloud = newAddress();
  const hook = await ok(201, 'POST', '/webhook-endpoints', {
    url: `http://127.0.0.1:${receiver.address().port}/hooks/payments`,
    events: ['tx.sent', 'tx.blocked', 'approval.pending', 'approval.approved', 'approval.rejected'],
    description: 'payments backend',
  });
  const research = await ok(201, 'POST', '/agents', {
    label: 'research-bot',
    policy: {
      daily_limit_usdc: 200,
      max_tx_usdc: 50,
      approval_threshold_usdc: 20,
      allowlist: [vendor, cloud],
      allowlist_labels: { [vendor]: 'Data vendor (invoices)', [cloud]: 'GPU cloud' },
      assets: ['USDC', 'EURC'],
    },
  });
  const support = await ok(201, 'POST', '/agents', { label: 'support-agent' });
  exportable = support;
  const travel = await ok(201, 'POST', '/agents', {
    label: 'travel-booker',
    policy: { daily_limit_usdc: 500, max_tx_usdc: 300, approval_threshold_usdc: 100 },
  });
  await ok(200, 'POST', `/wallets/${research.id}/fund`, { usdc: 500, sol: 1, assets: { EURC: 50 } });
  await ok(200, 'POST', `/wallets/${support.id}/fund`, { usdc: 120, sol: 0.5 });
  await ok(200, 'POST', `/wallets/${travel.id}/fund`, { usdc: 40 }); // no SOL: low on fees
  const agent = (await ok(201, 'POST', '/keys', { role: 'agent', label: 'agents runtime' })).key;
  await ok(201, 'POST', '/keys', { role: 'agent', label: 'research-bot only', wallet_ids: [research.id] });
  const send = (w, to, amount, memo, status = 200) => ok(status, 'POST', `/agents/${w.id}/send`, { to, amount, memo }, agent);
  await send(research, vendor, 12.5, 'invoice 2026-114');
  await send(research, cloud, 3.2, 'GPU hours, Nov 23');
  await send(support, newAddress(), 4.2, 'refund #1182');
  await send(support, newAddress(), 30, 'goodwill credit', 403); // over max per send
  const approved = await send(research, cloud, 24, 'reserved instance', 202);
  await ok([200, 202], 'POST', `/approvals/${approved.approval_id}/approve`, { note: 'planned spend' });
  const rejected = await send(support, newAddress(), 15, 'customer asked twice', 202);
  await ok(200, 'POST', `/approvals/${rejected.approval_id}/reject`, { note: 'duplicate request' });
  const waiting = await send(research, vendor, 35, 'annual data license', 202);
  await ok(200, 'PATCH', `/agents/${research.id}/policy`, { max_tx_usdc: 40 });
  await ok(200, 'POST', `/agents/${travel.id}/freeze`);
  await ok(201, 'POST', '/users', { address: newAddress(), role: 'approver' });
  await ok(201, 'POST', '/users', { address: newAddress(), role: 'viewer' });
  await eventually(
    'the payments confirmed',
    async () => {
      const { transactions } = await ok(200, 'GET', '/transactions');
      return transactions.length === 4 && transactions.every((t) => t.status === 'confirmed');
    },
    30000,
  );
  // A customer pays research-bot 25 USDC from outside, after its payments:
  // its ledger then holds 500 − 12.50 − 3.20 − 24 + 25.
  deposit = { wallet: research.id, ...(await depositUSDC(research.pubkey, 25_000_000)), balance: 485.3 };
  // Then a customer in Europe pays it 12.50 EURC: its 50 EURC become 62.50.
  euros = { wallet: research.id, ...(await depositToken(research.pubkey, EURC_MINT, 12_500_000)), balance: 62.5 };
  await eventually(
    'the deposits found by the watcher',
    async () => {
      const { transactions } = await ok(200, 'GET', `/transactions?direction=receive&wallet_id=${research.id}`);
      return [deposit, euros].every((d) => transactions.some((t) => t.signature === d.signature));
    },
    30000,
  );
  return [
    ['overview', '/'],
    ['approvals', '/approvals'],
    ['approval', `/approvals/${waiting.approval_id}`],
    ['wallets', '/wallets'],
    ['wallet', `/wallets/${research.id}`],
    ['transactions', '/transactions'],
    ['webhooks', '/webhooks'],
    ['webhook', `/webhooks/${hook.id}`],
    ['keys', '/keys'],
    ['users', '/users'],
    ['audit', '/audit'],
    ['analytics', '/analytics'],
  ];
}

test('every page at desktop and phone width, light and dark: no console error, no sideways scroll, no serious axe finding, fits a phone', async () => {
  const all = await team();
  // Every page is checked; the findings of all of them fail the test at the end.
  const findings = [];
  const check = async (p, what) => findings.push(...(await axeFindings(p)).map((f) => `${what}: ${f}`));
  const misfits = [];
  const fits = async (p, size, what) => size.name === 'phone' && misfits.push(...(await phoneProblems(p)).map((f) => `${what}: ${f}`));
  for (const size of WIDTHS) {
    const p = await page(demo, size);
    // The sign-in page, before signing in.
    await p.goto(`${BASE}/dashboard/`);
    await p.getByRole('button', { name: /^Sign in with/ }).waitFor();
    await fits(p, size, 'the sign-in page');
    for (const scheme of ['light', 'dark']) {
      await p.emulateMedia({ colorScheme: scheme });
      await p.screenshot({ path: `${WALK}signin-${size.name}${scheme === 'dark' ? '-dark' : ''}.png`, fullPage: true });
      await check(p, `the sign-in page at ${size.name} width, ${scheme}`);
    }
    await p.emulateMedia({ colorScheme: 'light' });
    await signIn(p);
    for (const [name, path] of all) {
      await p.emulateMedia({ colorScheme: 'light' });
      await p.goto(`${BASE}/dashboard${path}`);
      await p.locator('main h1').first().waitFor();
      await p.waitForLoadState('networkidle');
      if (name === 'approval') await p.getByText('On the allowlist as “Data vendor (invoices)”').waitFor();
      if (name === 'webhook') {
        // One delivery open: its attempts and payload are the page's point.
        await p.getByRole('button', { name: 'Details' }).first().click();
        await p.getByText('Attempts').first().waitFor();
      }
      await p.waitForTimeout(300); // the last answers render
      assert.equal(await p.getByText('Loading…').count(), 0, `${name} at ${size.name} still loading`);
      assert.equal(await p.locator('[data-skeleton]').count(), 0, `${name} at ${size.name} still shows a skeleton`);
      const overflow = await sideways(p);
      assert.ok(overflow <= 0, `${name} scrolls sideways by ${overflow} px at ${size.width} px`);
      await fits(p, size, name);
      // From the top: a page scrolled (by a click) would show its sticky header mid-page.
      await p.evaluate(() => window.scrollTo(0, 0));
      // The same page in both colour schemes, as the system setting picks them.
      for (const scheme of ['light', 'dark']) {
        await p.emulateMedia({ colorScheme: scheme });
        await p.screenshot({ path: `${WALK}${name}-${size.name}${scheme === 'dark' ? '-dark' : ''}.png`, fullPage: true });
        await check(p, `${name} at ${size.name} width, ${scheme}`);
      }
    }
    await p.context().close();
  }
  assert.deepEqual(misfits, [], 'what does not fit a phone (375 px)');
  assert.deepEqual(findings, [], 'serious or critical accessibility findings');
});

/** recipientKey is a fresh X25519 public key, base64, as an owner would paste it (the private half stays here). */
const recipientKey = () => Buffer.from(generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x, 'base64url').toString('base64');

test('two owners export a wallet: one asks on its page, the other approves in the dialog that shows the recipient key', async () => {
  const findings = [];
  const misfits = [];
  /** shoot screenshots page p as name at size, light and dark, and checks it (axe; at phone width, that it fits). */
  const shoot = async (p, name, size, schemes = ['light', 'dark']) => {
    await p.waitForLoadState('networkidle');
    await p.waitForTimeout(300); // the last answers render
    if (size.name === 'phone') misfits.push(...(await phoneProblems(p)).map((f) => `${name}: ${f}`));
    for (const scheme of schemes) {
      await p.emulateMedia({ colorScheme: scheme });
      await p.screenshot({ path: `${WALK}${name}-${size.name}${scheme === 'dark' ? '-dark' : ''}.png`, fullPage: true });
      findings.push(...(await axeFindings(p)).map((f) => `${name} at ${size.name} width, ${scheme}: ${f}`));
    }
    await p.emulateMedia({ colorScheme: 'light' });
  };

  // The first owner asks on the wallet's page, for each width's approval:
  // the key is checked as typed (32 bytes of base64).
  const keys = WIDTHS.map(() => recipientKey());
  const a = await signedIn(demo);
  await a.goto(`${BASE}/dashboard/wallets/${exportable.id}`);
  const form = a.getByRole('form', { name: 'Ask to export the secret' });
  const field = form.getByLabel('Recipient public key (X25519, base64)');
  const ask = form.getByRole('button', { name: 'Ask to export' });
  await field.fill(keys[0].slice(0, 40));
  await form.getByText('An X25519 public key is 32 bytes; this is 30.').waitFor();
  assert.ok(await ask.isDisabled(), 'a key that is not 32 bytes can be sent');
  for (const key of keys) {
    await field.fill(key);
    await ask.click();
    await eventually('the request asked', async () =>
      (await asSession(a, 'GET', '/exports')).body.exports.some((x) => x.recipient_public_key === key),
    );
  }
  const asked = (await asSession(a, 'GET', '/exports?state=pending')).body.exports;
  assert.equal(asked.length, 2, JSON.stringify(asked));
  await a.context().close();

  // The second owner (an owner before the requests) approves each, at one width each.
  for (const [i, size] of WIDTHS.entries()) {
    const x = asked.find((e) => e.recipient_public_key === keys[i]);
    const b = await page(coOwner, size);
    await signIn(b);
    if (size.name === 'desktop') await b.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Exports', exact: true }).click();
    else await b.goto(`${BASE}/dashboard/exports`);
    const item = b.getByRole('list', { name: 'Export requests' }).locator(`li[data-export="${x.id}"]`);
    await item.getByText('support-agent').waitFor();
    assert.equal(await item.getByTestId('recipient').textContent(), keys[i]);
    assert.equal(await item.getByTestId('export-state').getAttribute('data-state'), 'pending');
    // Pending first.
    assert.equal(
      await b.getByRole('list', { name: 'Export requests' }).locator('li').first().getByTestId('export-state').getAttribute('data-state'),
      'pending',
    );
    await shoot(b, 'exports', size);
    await item.getByRole('button', { name: 'Approve…' }).click();
    const dialog = b.getByRole('alertdialog');
    assert.equal(await dialog.getByTestId('dialog-recipient').textContent(), keys[i]);
    await dialog.getByText(addressOf(demo)).waitFor();
    await shoot(b, 'export-approve', size, ['light']);
    await dialog.getByRole('button', { name: 'Approve the export' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Through the API: approved, then sealed by the worker.
    const decided = await asSession(b, 'GET', `/wallets/${exportable.id}/exports/${x.id}`);
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.ok(['approved', 'exported'].includes(decided.body.state), JSON.stringify(decided.body));
    assert.equal(decided.body.decided_by, `user:${addressOf(coOwner)}`);
    const sealed = await eventually(
      'the export sealed',
      async () => {
        const { body } = await asSession(b, 'GET', `/wallets/${exportable.id}/exports/${x.id}`);
        return body.state === 'exported' && body;
      },
      30000,
    );
    assert.ok(sealed.sealed_secret.length > 40, JSON.stringify(sealed));
    // The page shows it exported, and the request's page the sealed secret to copy.
    await eventually('exported shown', async () => (await item.getByTestId('export-state').getAttribute('data-state')) === 'exported', 15000);
    await item.getByRole('link', { name: 'Details' }).click();
    await b.getByTestId('sealed-secret').waitFor();
    assert.equal(await b.getByTestId('sealed-secret').textContent(), sealed.sealed_secret);
    await b.getByRole('button', { name: 'Copy sealed secret' }).waitFor();
    await shoot(b, 'export', size);
    await b.context().close();
  }
  const { body: wallet } = await api('GET', `/agents/${exportable.id}`, DEMO_KEY);
  assert.ok(wallet.exported_at, 'the wallet is not marked exported');
  assert.deepEqual(misfits, [], 'what does not fit a phone (375 px)');
  assert.deepEqual(findings, [], 'serious or critical accessibility findings');
});

test("a wallet that received USDC and EURC: every asset's balance, both deposits with their asset, each asset's balance over time (chart and table), no differences", async () => {
  const p = await signedIn(demo);
  await p.goto(`${BASE}/dashboard/wallets/${deposit.wallet}`);
  // Every asset of the network, zero where it holds none, SOL last.
  const holdings = p.getByRole('list', { name: 'Balance of each asset' });
  await holdings.getByText(usdcText(deposit.balance)).waitFor();
  const listed = await holdings.getByRole('listitem').evaluateAll((lis) => lis.map((li) => [li.dataset.asset, li.textContent]));
  assert.deepEqual(
    listed.map(([asset]) => asset),
    ['USDC', 'PYUSD', 'USDG', 'EURC', 'SOL'],
  );
  assert.deepEqual(listed.slice(0, 4), [
    ['USDC', usdcText(deposit.balance)],
    ['PYUSD', '0.00 PYUSD'],
    ['USDG', '0.00 USDG'],
    ['EURC', `${amountText(euros.balance)} EURC`],
  ]);
  assert.match(listed[4][1], /^[\d.,]+ SOL$/);
  // Each deposit in its asset, from the customer who paid it.
  const txs = p.getByRole('table', { name: 'Transactions of this wallet' });
  for (const [d, text] of [
    [deposit, `+${usdcText(25)}`],
    [euros, `+${amountText(12.5)} EURC`],
  ]) {
    const row = txs.locator(`tr[data-signature="${d.signature}"]`);
    await row.waitFor();
    const cells = await row.textContent();
    assert.ok(cells.includes(text) && cells.includes(`from ${d.from.slice(0, 4)}…${d.from.slice(-4)}`), cells);
  }
  // USDC first: its newest point is now, the balance after its deposit, in the table and painted in the chart.
  const newest = (asset) =>
    p
      .getByRole('table', { name: `Balance of ${asset} at each point, newest first` })
      .locator('tbody tr')
      .first();
  await eventually(
    'the USDC balance after the deposit',
    async () => (await newest('USDC').locator('td').nth(1).textContent()) === amountText(deposit.balance),
  );
  /** painted says the chart of asset has its line (the light scheme's first series colour, #0b57d0) in its upper half (the axis starts at zero). */
  const painted = (asset) =>
    p.getByRole('img', { name: `${asset} of this wallet, a point a day` }).evaluate((canvas) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height / 2);
      for (let i = 0; i < data.length; i += 4) if (data[i] === 11 && data[i + 1] === 87 && data[i + 2] === 208 && data[i + 3] === 255) return true;
      return false;
    });
  await eventually('the USDC balance painted', () => painted('USDC'));
  const chartOf = p.getByRole('region', { name: 'Balance over time' });
  // EURC picked: its own points, the newest the 62.50 after its deposit, and its own line.
  await chartOf.getByLabel('Asset', { exact: true }).selectOption('EURC');
  await eventually(
    'the EURC balance after the deposit',
    async () => (await newest('EURC').locator('td').nth(1).textContent()) === amountText(euros.balance),
  );
  const heads = await p.getByRole('table', { name: 'Balance of EURC at each point, newest first' }).locator('th').allTextContents();
  assert.deepEqual(heads, ['At (UTC)', 'EURC']);
  await eventually('the EURC balance painted', () => painted('EURC'));
  await p.getByRole('region', { name: 'Balance over time' }).screenshot({ path: `${WALK}wallet-eurc-desktop.png` });
  // Every asset: a column each, in the network's order, then SOL.
  await chartOf.getByLabel('Asset', { exact: true }).selectOption({ label: 'Every asset' });
  const all = p.getByRole('table', { name: 'Balance of every asset at each point, newest first' });
  await all.waitFor();
  assert.deepEqual(await all.locator('th').allTextContents(), ['At (UTC)', 'USDC', 'PYUSD', 'USDG', 'EURC', 'SOL']);
  const cells = await all.locator('tbody tr').first().locator('td').allTextContents();
  assert.deepEqual(cells.slice(1, 5), [amountText(deposit.balance), '0.00', '0.00', amountText(euros.balance)]);
  await p.getByRole('region', { name: 'Balance over time' }).screenshot({ path: `${WALK}wallet-every-asset-desktop.png` });
  // Every change of its balance is explained: its own payments, and the deposits.
  await p.getByRole('region', { name: 'Differences' }).getByText('None: every change of this wallet’s balance is explained.').waitFor();
  await p.context().close();
});

// The scheduler's sweep runs during the walk: a purchase from the official
// x402 seller is found on chain and listed among the transactions, with
// the resource it bought.
test('an x402 purchase is listed among transactions with its resource', async () => {
  const resource = `${env('SELLER_URL')}/weather`;
  const challenge = await fetch(resource);
  assert.equal(challenge.status, 402);
  const required = JSON.parse(Buffer.from(challenge.headers.get('payment-required'), 'base64').toString());
  const paid = await api('POST', `/agents/${WALLET_ID}/x402/pay`, AGENT_KEY, { payment_required: required });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  const res = await fetch(resource, { headers: { [paid.body.header]: paid.body.payment_signature } });
  assert.equal(res.status, 200, await res.text());
  const settled = await eventually(
    'settled',
    async () => {
      const { body } = await api('GET', `/x402/payments/${paid.body.payment_id}`, AGENT_KEY);
      return body.state === 'settled' && body;
    },
    20000,
  );

  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/transactions`);
  const row = p.locator(`tr[data-signature="${settled.signature}"]`); // the transaction the seller settled
  await row.waitFor();
  assert.equal(await row.getByTestId('x402-resource').textContent(), `x402 · ${resource}`);
  assert.match(await row.textContent(), /0\.01/);
  await p.context().close();
});

test('no console errors on the walk', assertNoConsoleErrors);
