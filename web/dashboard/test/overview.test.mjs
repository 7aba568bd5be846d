// The overview (the landing page): its numbers are those of the API, the
// low-SOL warning follows the chain, and it fits a phone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN_KEY,
  AGENT_KEY,
  api,
  assertNoConsoleErrors,
  consoleErrors,
  eventually,
  newAddress,
  owner,
  page,
  park,
  rpc,
  SHOTS,
  sideways,
  signedIn,
  signIn,
  useBrowser,
  usdcText,
  amountText,
  viewer,
  WALLET_ID,
} from './lib.mjs';

useBrowser();

const today = () => new Date().toISOString().slice(0, 10);
const num = (n, digits = 6) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const balanceText = (b) => ({ usdc: usdcText(b.usdc), sol: `${num(b.sol, 9)} SOL` });

/** shownWallet is what a wallet's card says: balances and today's spend. */
async function shownWallet(p, id) {
  const card = p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${id}"]`);
  const field = async (f) => (await card.locator(`[data-field="${f}"]`).textContent()).trim();
  return { usdc: await field('usdc'), sol: await field('sol'), spend: await field('spend') };
}

/** expectWallets waits until every wallet of the first page shows the API's balance and today's spend. */
async function expectWallets(p) {
  const { agents } = (await api('GET', '/agents?limit=50', ADMIN_KEY)).body;
  assert.ok(agents.some((a) => a.id === WALLET_ID));
  for (const a of agents) {
    let last;
    await eventually(
      `wallet ${a.label} as the API has it (${JSON.stringify(last)})`,
      async () => {
        const [bal, an] = await Promise.all([
          api('GET', `/wallets/${a.id}/balance`, ADMIN_KEY),
          api('GET', `/analytics?from=${today()}&to=${today()}`, ADMIN_KEY),
        ]);
        assert.equal(bal.status, 200, JSON.stringify(bal.body));
        const spent = an.body.spend.filter((s) => s.wallet_id === a.id).reduce((n, s) => n + s.amount_usdc, 0);
        const want = { ...balanceText(bal.body), spend: `${amountText(spent)} of ${usdcText(a.policy.daily_limit_usdc)} today` };
        last = { want, shown: await shownWallet(p, a.id) };
        return JSON.stringify(last.want) === JSON.stringify(last.shown);
      },
      30000,
    );
    const card = p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${a.id}"]`);
    assert.equal((await card.locator('.ov-state').textContent()).trim(), a.state);
    assert.equal(await card.getByRole('link', { name: a.label, exact: true }).getAttribute('href'), `/dashboard/wallets/${a.id}`);
  }
  return agents;
}

/** expectPending waits until the pending count is that of the API. */
async function expectPending(p) {
  await eventually(
    'the pending count of the API',
    async () => {
      const { approvals } = (await api('GET', '/approvals?status=pending&limit=50', ADMIN_KEY)).body;
      return (await p.locator('[data-field="pending-count"]').textContent()) === String(approvals.length);
    },
    10000,
  );
}

let sent; // the small send's signature

test('the overview: wallets with live balances and today’s spend, pending approvals and recent transactions as the API has them', async () => {
  const small = await api('POST', `/agents/${WALLET_ID}/send`, AGENT_KEY, { to: newAddress(), amount: 0.5, memo: 'overview small' });
  assert.equal(small.status, 200, JSON.stringify(small.body));
  assert.equal(small.body.status, 'sent');
  sent = small.body.signature;
  const parked = await park(1.5, 'overview');

  const p = await signedIn(owner);
  await p.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  const net = p.getByRole('region', { name: 'Network' });
  assert.match(await net.textContent(), /Devnet: test tokens/);
  assert.equal(await net.getAttribute('data-network'), 'devnet');

  await expectWallets(p);
  // The small send counts against today's limit: 0.5 at least (other tests may send more).
  const { spend } = await shownWallet(p, WALLET_ID);
  assert.ok(Number(spend.split(' ')[0].replaceAll(',', '')) >= 0.5, spend);
  assert.equal(
    await p.getByRole('meter', { name: /spend today/ }).count(),
    await p.getByRole('list', { name: 'Wallets' }).locator('[data-wallet]').count(),
  );

  await expectPending(p);
  const item = p.locator(`[data-section="pending"] [data-approval="${parked.id}"]`);
  await item.waitFor();
  assert.match(await item.textContent(), /1\.50 USDC from payer to/);
  assert.equal(
    await p.locator('[data-section="pending"]').getByRole('link', { name: 'All pending approvals' }).getAttribute('href'),
    '/dashboard/approvals',
  );

  const txs = p.getByRole('list', { name: 'Recent transactions' });
  await eventually('the send among the recent transactions', async () => (await txs.locator(`[data-signature="${sent}"]`).count()) === 1, 20000);
  const row = txs.locator(`[data-signature="${sent}"]`);
  assert.match(await row.textContent(), /0\.50 USDC/);
  assert.match(await row.textContent(), /overview small/);
  const recent = (await api('GET', '/transactions?limit=10', ADMIN_KEY)).body.transactions;
  await eventually('the ten newest transactions', async () => {
    const shown = await txs.locator('li').evaluateAll((lis) => lis.map((li) => li.dataset.signature));
    return JSON.stringify(shown) === JSON.stringify(recent.map((t) => t.signature));
  });
  await p.screenshot({ path: `${SHOTS}overview.png`, fullPage: true });

  // The approval's link opens its page.
  await item.getByRole('link').click();
  await p.waitForURL(`**/dashboard/approvals/${parked.id}`);
  await p.getByText('overview').first().waitFor();
  await p.context().close();
});

test('a new wallet without SOL is flagged as low on SOL, and leaves the list once funded', async () => {
  const made = await api('POST', '/agents', ADMIN_KEY, { label: 'overview-fresh' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const { id, pubkey } = made.body;
  const p = await signedIn(owner);
  const low = p.locator('[data-section="low-sol"]');
  const flagged = low.locator(`[data-wallet="${id}"]`);
  await flagged.waitFor({ timeout: 15000 });
  assert.match(await flagged.textContent(), /overview-fresh.*0 SOL/);
  assert.equal(await flagged.getByRole('link', { name: 'overview-fresh' }).getAttribute('href'), `/dashboard/wallets/${id}`);
  // The funded test wallet is not flagged.
  assert.equal(await low.locator(`[data-wallet="${WALLET_ID}"]`).count(), 0);
  await p.screenshot({ path: `${SHOTS}overview-low-sol.png`, fullPage: true });

  await rpc('surfnet_setAccount', [pubkey, { lamports: 1_000_000_000 }]);
  assert.equal((await api('GET', `/wallets/${id}/balance`, ADMIN_KEY)).body.sol, 1);
  // The page's own refresh (every 12 s) takes it off the list.
  await flagged.waitFor({ state: 'detached', timeout: 40000 });
  const card = p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${id}"]`);
  assert.equal((await card.locator('[data-field="sol"]').textContent()).trim(), '1 SOL');
  // A frozen wallet says so on its card.
  const frozen = await api('POST', `/agents/${id}/freeze`, ADMIN_KEY);
  assert.equal(frozen.status, 200, JSON.stringify(frozen.body));
  await p.getByRole('button', { name: 'Refresh', exact: true }).click();
  await card.locator('.ov-state').filter({ hasText: 'frozen' }).waitFor({ timeout: 15000 });
  await p.screenshot({ path: `${SHOTS}overview-frozen.png`, fullPage: true });
  await p.context().close();
});

test('a balance that cannot be read shows as unavailable, and the rest of the page stays', async () => {
  const p = await page(viewer);
  const mark = consoleErrors.length;
  await rpc('localnet_setFaults', [{ down: true }]);
  const card = p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${WALLET_ID}"]`);
  try {
    await signIn(p);
    await card.locator('[data-field="sol"]').getByText('unavailable').waitFor({ timeout: 15000 });
    await card.locator('[data-field="usdc"]').getByText('unavailable').waitFor();
    await p.locator('[data-section="low-sol"]').getByText('could not be read').waitFor();
    await p.locator('[data-section="low-sol"]').getByText('Unknown: no balance could be read.').waitFor();
    assert.match(await card.locator('[data-field="spend"]').textContent(), /USDC today$/);
    await p.getByRole('list', { name: 'Recent transactions' }).locator('li').first().waitFor();
    await p.screenshot({ path: `${SHOTS}overview-unavailable.png`, fullPage: true });
  } finally {
    await rpc('localnet_setFaults', [{}]);
  }
  await p.getByRole('button', { name: 'Refresh', exact: true }).click();
  await card.locator('[data-field="sol"]').filter({ hasText: / SOL$/ }).waitFor({ timeout: 15000 });
  await p.context().close();
  // The balance reads' 503s (no node answered) while the node was down are the browser's network log, not the page's errors.
  for (let i = consoleErrors.length - 1; i >= mark; i--) if (/status of 503/.test(consoleErrors[i])) consoleErrors.splice(i, 1);
});

test('a viewer sees the same overview', async () => {
  const p = await signedIn(viewer);
  await p.getByRole('region', { name: 'Network' }).getByText('Devnet: test tokens').waitFor();
  await expectWallets(p);
  await expectPending(p);
  await p.context().close();
});

test('the overview at phone width (375 px): one column, no sideways scroll', async () => {
  const p = await signedIn(owner, { width: 375, height: 740 });
  await p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${WALLET_ID}"] [data-field="sol"]`).filter({ hasText: 'SOL' }).waitFor();
  await p.getByRole('list', { name: 'Recent transactions' }).waitFor();
  const overflow = await sideways(p);
  assert.equal(overflow, 0, `the page scrolls sideways by ${overflow} px at 375 px`);
  await p.screenshot({ path: `${SHOTS}overview-phone.png`, fullPage: true });
  // Keyboard: Tab reaches the wallet's link and Enter follows it.
  const { agents } = (await api('GET', '/agents?limit=1', ADMIN_KEY)).body;
  const target = `/dashboard/wallets/${agents[0].id}`;
  for (let i = 0; i < 60; i++) {
    await p.keyboard.press('Tab');
    if ((await p.evaluate(() => document.activeElement?.getAttribute('href'))) === target) break;
  }
  assert.equal(await p.evaluate(() => document.activeElement?.getAttribute('href')), target);
  await p.keyboard.press('Enter');
  await p.waitForURL(`**${target}`);
  await p.context().close();
});

test('on a mainnet account the overview says REAL MONEY', async () => {
  const p = await signedIn(owner);
  await p.getByRole('region', { name: 'Network' }).getByText('Devnet: test tokens').waitFor();
  // Switch between rounds: a balance read in flight would be answered by the other account (404).
  await p.getByRole('button', { name: 'Refresh', exact: true }).waitFor();
  const account = p.getByLabel('Account');
  const live = (await account.locator('option').allTextContents()).find((o) => o.startsWith('mainnet'));
  await account.selectOption({ label: live });
  const net = p.getByRole('region', { name: 'Network' });
  await net.getByText('Mainnet: REAL MONEY').waitFor();
  assert.equal(await net.getAttribute('data-network'), 'mainnet');
  assert.equal(await p.getByRole('list', { name: 'Wallets' }).locator(`[data-wallet="${WALLET_ID}"]`).count(), 0);
  await p.getByText('No wallets yet: create one').waitFor();
  await p.screenshot({ path: `${SHOTS}overview-mainnet.png`, fullPage: true });
  await p.context().close();
});

test('no console errors on the overview', assertNoConsoleErrors);
