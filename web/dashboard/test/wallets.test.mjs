// The wallet pages in a real browser: an owner creates a wallet, finds it
// by label and by address, funds it on the local chain, freezes and
// unfreezes it, and changes its policy after trying a send against the
// proposed one; viewers and approvers see only what their role allows.
// Each step is checked against the API and, for money, the chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressOf,
  ADMIN_KEY,
  AGENT_KEY,
  api,
  approver,
  assertNoConsoleErrors,
  BASE,
  chainUSDC,
  eventually,
  newAddress,
  owner,
  SHOTS,
  sideways,
  signedIn,
  useBrowser,
  usdcText,
  viewer,
  WALLET_ID,
} from './lib.mjs';

useBrowser();

const LABEL = `treasury-${Date.now().toString(36)}`;
const OWNER = `user:${addressOf(owner)}`;
let wallet; // { id, pubkey } of the wallet the owner creates

const openWallet = async (p) => {
  await p.goto(`${BASE}/dashboard/wallets/${wallet.id}`);
  await p.getByRole('heading', { level: 1, name: LABEL }).waitFor();
};
// The list pages by 50: the wallet is found by its label, wherever it would be.
const rowInList = async (p) => {
  await p.getByRole('searchbox', { name: 'Search' }).fill(LABEL);
  const row = p.locator(`[data-wallet="${wallet.id}"]`);
  await row.waitFor();
  return row;
};
const headerState = (p) => p.getByRole('heading', { level: 1 }).getByTestId('state');

test('an owner creates a wallet with its policy and lands on its page', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Wallets', exact: true }).click();
  await p.getByRole('button', { name: 'New wallet…' }).click();
  const form = p.getByRole('form', { name: 'Create a wallet' });
  await form.getByLabel('Label', { exact: true }).fill(LABEL);
  await form.getByLabel('Daily limit').fill('40');
  await form.getByLabel('Max per send').fill('20');
  await form.getByLabel('Approval from').fill('5.1234567');
  await form.getByText('At most 6 decimals.').waitFor();
  assert.ok(await form.getByRole('button', { name: 'Create wallet' }).isDisabled(), 'an amount with 7 decimals can be submitted');
  await form.getByLabel('Approval from').fill('5');
  await form.getByRole('button', { name: 'Create wallet' }).click();
  await p.waitForURL(/\/dashboard\/wallets\/[0-9a-f-]{36}$/);
  const id = p.url().split('/').pop();
  const { status, body } = await api('GET', `/agents/${id}`, ADMIN_KEY);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.label, LABEL);
  assert.equal(body.state, 'active');
  const { daily_limit_usdc, max_tx_usdc, approval_threshold_usdc, allowlist } = body.policy;
  assert.deepEqual(
    { daily_limit_usdc, max_tx_usdc, approval_threshold_usdc, allowlist },
    { daily_limit_usdc: 40, max_tx_usdc: 20, approval_threshold_usdc: 5, allowlist: [] },
  );
  wallet = { id, pubkey: body.pubkey };
  await p.getByRole('heading', { level: 1, name: LABEL }).waitFor();
  assert.equal(await p.getByTestId('address').textContent(), body.pubkey);
  await p.context().close();
});

test('search by label and by address prefix narrows the list as the API does', async () => {
  const p = await signedIn(viewer);
  await p.getByRole('link', { name: 'Wallets', exact: true }).click();
  const shown = () => p.locator('[data-wallet]').evaluateAll((lis) => lis.map((li) => li.dataset.wallet));
  const ids = async (q) => (await api('GET', `/agents?limit=50${q ? `&q=${encodeURIComponent(q)}` : ''}`, ADMIN_KEY)).body.agents.map((a) => a.id);
  const all = await ids('');
  assert.ok(all.includes(wallet.id) && all.includes(WALLET_ID), JSON.stringify(all));
  await eventually('every wallet', async () => JSON.stringify(await shown()) === JSON.stringify(all));
  await p.screenshot({ path: `${SHOTS}wallets.png`, fullPage: true });

  // A piece of the label in other case; the address's first characters.
  for (const q of [LABEL.slice(3).toUpperCase(), wallet.pubkey.slice(0, 6)]) {
    const want = await ids(q);
    assert.deepEqual(want, [wallet.id], `the API's answer to q=${q}`);
    await p.getByRole('searchbox', { name: 'Search' }).fill(q);
    await eventually(`the list for ${q}`, async () => JSON.stringify(await shown()) === JSON.stringify(want));
    await p.getByRole('searchbox', { name: 'Search' }).fill('');
    await eventually('every wallet again', async () => (await shown()).length === all.length);
  }
  await p.getByRole('searchbox', { name: 'Search' }).fill('no-such-wallet-anywhere');
  await p.getByText('No wallet matches').waitFor();
  await p.context().close();
});

test('fund on localnet: the new balance on the page, through the API and on chain', async () => {
  const p = await signedIn(owner);
  await openWallet(p);
  const receive = p.getByRole('region', { name: 'Receive funds' });
  assert.equal(
    await receive
      .getByRole('img', { name: `QR code of the address ${wallet.pubkey}` })
      .locator('path')
      .count(),
    1,
  );
  const fund = receive.getByRole('form', { name: 'Fund on localnet' });
  await fund.getByLabel('USDC', { exact: true }).fill('12.5');
  await fund.getByLabel('SOL', { exact: true }).fill('101');
  await fund.getByText('At most 100 SOL at a time.').waitFor();
  assert.ok(await fund.getByRole('button', { name: 'Fund' }).isDisabled());
  await fund.getByLabel('SOL', { exact: true }).fill('1');
  await fund.getByRole('button', { name: 'Fund' }).click();
  await fund.getByRole('status').filter({ hasText: '12.50 USDC' }).waitFor();
  await p.getByTestId('balance-usdc').filter({ hasText: '12.50 USDC' }).waitFor();
  const balance = (await api('GET', `/wallets/${wallet.id}/balance`, ADMIN_KEY)).body;
  assert.equal(balance.usdc, 12.5, JSON.stringify(balance));
  assert.ok(balance.sol >= 1, JSON.stringify(balance));
  assert.equal(await chainUSDC(wallet.pubkey), 12_500_000);
  await p.screenshot({ path: `${SHOTS}wallet.png`, fullPage: true });
  await p.context().close();
});

test('freeze on the page blocks the agent (403 wallet_frozen) and shows on the list; unfreeze lets a small send through', async () => {
  const p = await signedIn(owner);
  await openWallet(p);
  await p.getByRole('button', { name: 'Freeze…' }).click();
  await p.getByRole('button', { name: 'Confirm freeze' }).click();
  await headerState(p).filter({ hasText: 'frozen' }).waitFor();
  assert.equal((await api('GET', `/agents/${wallet.id}`, ADMIN_KEY)).body.state, 'frozen');
  const blocked = await api('POST', `/agents/${wallet.id}/send`, AGENT_KEY, { to: newAddress(), amount: 0.5 });
  assert.equal(blocked.status, 403, JSON.stringify(blocked.body));
  assert.equal(blocked.body.reason, 'wallet_frozen');

  await p.getByRole('link', { name: '← All wallets' }).click();
  const row = await rowInList(p);
  await row.getByTestId('state').filter({ hasText: 'frozen' }).waitFor();
  await row.getByRole('link', { name: LABEL }).click();
  await p.getByRole('button', { name: 'Unfreeze…' }).click();
  await p.getByRole('button', { name: 'Confirm unfreeze' }).click();
  await headerState(p).filter({ hasText: 'active' }).waitFor();
  const to = newAddress();
  const sent = await api('POST', `/agents/${wallet.id}/send`, AGENT_KEY, { to, amount: 0.5, memo: 'after unfreeze' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  assert.equal(sent.body.status, 'sent');
  assert.equal(await eventually('the transfer on chain', async () => (await chainUSDC(to)) || false, 20000), 500_000);

  // Its transactions and approvals show on its page, with their links.
  const parked = await api('POST', `/agents/${wallet.id}/send`, AGENT_KEY, { to: newAddress(), amount: 6, memo: 'needs a person' });
  assert.equal(parked.status, 202, JSON.stringify(parked.body));
  await p.reload();
  await p.locator(`tr[data-signature="${sent.body.signature}"]`).waitFor();
  await p.locator(`[data-approval="${parked.body.approval_id}"]`).getByRole('link').click();
  await p.waitForURL(`**/dashboard/approvals/${parked.body.approval_id}`);
  await p.getByText('needs a person').first().waitFor();
  await p.goBack();

  // The history has the freeze and the unfreeze, by this owner.
  const history = p.getByRole('region', { name: 'Policy history' });
  await history.locator(`li[data-action="wallet.frozen"][data-actor="${OWNER}"]`).waitFor();
  await history.locator(`li[data-action="wallet.unfrozen"][data-actor="${OWNER}"]`).waitFor();
  await p.context().close();
});

test('the policy editor: checked while typed, the changes old → new, a send tried against the proposed policy, saved, in the history', async () => {
  const p = await signedIn(owner, { height: 1600 });
  await openWallet(p);
  const policy = p.getByRole('region', { name: 'Policy', exact: true });
  const save = policy.getByRole('button', { name: 'Save policy' });
  assert.ok(await save.isDisabled(), 'Save is enabled with no change');
  await policy.getByLabel('Max per send').fill('8');

  // The address book: each address checked while typed.
  await policy.getByRole('button', { name: 'Add address' }).click();
  const address1 = policy.getByLabel('Address 1', { exact: true });
  const friend = newAddress();
  await address1.fill(`${friend.slice(0, 10)}0OIl`);
  await policy.getByText('is not a base58 character').waitFor();
  assert.equal(await address1.getAttribute('aria-invalid'), 'true');
  assert.ok(await save.isDisabled(), 'Save is enabled with an invalid address');
  await address1.fill(friend.slice(0, 20));
  await policy.getByText(/Decodes to \d+ bytes; a Solana address has 32/).waitFor();
  assert.ok(await save.isDisabled());
  await address1.fill(friend);
  await policy.getByLabel('Label 1 (optional)').fill('Supplier A');
  assert.equal(await address1.getAttribute('aria-invalid'), 'false');
  // A duplicate is flagged, and removing it clears the error.
  await policy.getByRole('button', { name: 'Add address' }).click();
  await policy.getByLabel('Address 2', { exact: true }).fill(friend);
  await policy.getByText('Already in the list (row 1).').waitFor();
  assert.ok(await save.isDisabled(), 'Save is enabled with a duplicate');
  await policy.getByRole('button', { name: 'Remove address 2' }).click();
  assert.ok(await save.isEnabled());

  const diff = policy.getByTestId('diff');
  assert.equal((await diff.locator('[data-change="max_tx_usdc"]').textContent()).replace(/\s+/g, ' '), 'Max per send: 20.00 USDC → 8.00 USDC');
  const added = await diff.locator('[data-change="added"]').textContent();
  assert.ok(added.includes(friend) && added.includes('Supplier A'), added);
  assert.equal(await diff.locator('li').count(), 2);

  // A recipient outside the proposed allowlist: blocked by it, sent under the current policy.
  const outsider = newAddress();
  const tryIt = policy.getByRole('form', { name: 'Try a send' });
  await tryIt.getByLabel('To', { exact: true }).fill(outsider);
  await tryIt.getByLabel('Amount', { exact: true }).fill('1');
  await tryIt.getByLabel('Memo (optional)').fill('dry run');
  await tryIt.getByRole('button', { name: 'Try it' }).click();
  const outcome = policy.getByTestId('preview-outcome');
  await outcome.locator('[data-outcome="blocked"]').waitFor();
  assert.equal(await outcome.locator('[data-reason]').textContent(), 'recipient_not_allowed');
  await policy.getByTestId('preview-current').locator('[data-outcome="sent"]').waitFor();
  const now = await api('POST', `/agents/${wallet.id}/send/preview`, ADMIN_KEY, { to: outsider, amount: 1, memo: 'dry run' });
  assert.equal(now.status, 200, JSON.stringify(now.body));
  assert.equal(now.body.outcome, 'sent');
  const proposed = await api('POST', `/agents/${wallet.id}/send/preview`, ADMIN_KEY, {
    to: outsider,
    amount: 1,
    policy: { max_tx_usdc: 8, allowlist: [friend] },
  });
  assert.deepEqual([proposed.body.outcome, proposed.body.reason], ['blocked', 'recipient_not_allowed'], JSON.stringify(proposed.body));
  assert.equal(await policy.getByTestId('preview-remaining').textContent(), usdcText(now.body.remaining_today_usdc));
  await policy.screenshot({ path: `${SHOTS}policy-editor.png` });

  await save.click();
  await policy.getByText('Saved.').waitFor();
  const { body } = await api('GET', `/agents/${wallet.id}`, ADMIN_KEY);
  // One approve, as before (the editor left its field alone).
  const { approvals_required: approvals, ...saved } = body.policy;
  assert.equal(approvals, 1);
  assert.deepEqual(saved, {
    daily_limit_usdc: 40,
    max_tx_usdc: 8,
    approval_threshold_usdc: 5,
    allowlist: [friend],
    allowlist_labels: { [friend]: 'Supplier A' },
    // The rules the editor left alone: none set.
    weekly_limit_usdc: null,
    monthly_limit_usdc: null,
    max_tx_per_hour: null,
    max_tx_per_day: null,
    active_hours: null,
    outside_active_hours: 'block',
    assets: ['USDC'],
    daily_limit_eur: null,
    max_tx_eur: null,
    approval_threshold_eur: null,
    weekly_limit_eur: null,
    monthly_limit_eur: null,
  });
  assert.equal(await policy.getByTestId('diff').count(), 0);

  const entry = p.getByRole('region', { name: 'Policy history' }).locator(`li[data-action="policy.updated"][data-actor="${OWNER}"]`).first();
  await entry.waitFor();
  assert.equal((await entry.locator('[data-change="max_tx_usdc"]').textContent()).replace(/\s+/g, ' '), 'Max per send: 20.00 USDC → 8.00 USDC');
  assert.ok((await entry.locator('[data-change="added"]').textContent()).includes(friend));

  // Someone else saves meanwhile: an untouched editor follows; an edited one says so.
  const patch = async (body) => assert.equal((await api('PATCH', `/agents/${wallet.id}/policy`, ADMIN_KEY, body)).status, 200);
  await patch({ daily_limit_usdc: 35 });
  await eventually('the editor follows', async () => (await policy.getByLabel('Daily limit').inputValue()) === '35');
  await policy.getByLabel('Approval from').fill('4');
  await patch({ daily_limit_usdc: 30 });
  await policy.getByText('changed by someone else').waitFor({ timeout: 10000 });
  assert.equal((await diff.locator('[data-change="daily_limit_usdc"]').textContent()).replace(/\s+/g, ' '), 'Daily limit: 30.00 USDC → 35.00 USDC');
  await policy.getByRole('button', { name: 'Discard changes' }).click();
  assert.equal(await policy.getByLabel('Daily limit').inputValue(), '30');
  assert.equal(await policy.getByText('changed by someone else').count(), 0);
  await p.context().close();
});

test('roles: a viewer only reads; an approver may freeze but not unfreeze nor edit the policy', async () => {
  const v = await signedIn(viewer);
  await v.getByRole('link', { name: 'Wallets', exact: true }).click();
  await rowInList(v);
  assert.equal(await v.getByRole('button', { name: 'New wallet…' }).count(), 0);
  assert.equal(await v.getByRole('form', { name: 'Create a wallet' }).count(), 0);
  await openWallet(v);
  await v.getByRole('region', { name: 'Policy', exact: true }).getByText('Supplier A').waitFor();
  assert.equal(await v.getByRole('region', { name: 'Policy', exact: true }).getByRole('textbox').count(), 0);
  assert.equal(await v.getByRole('button', { name: /Freeze|Unfreeze|Fund|Save/ }).count(), 0);
  assert.equal(await v.getByRole('form', { name: 'Fund on localnet' }).count(), 0);
  await v.screenshot({ path: `${SHOTS}wallet-viewer.png`, fullPage: true });
  await v.context().close();

  const a = await signedIn(approver);
  await openWallet(a);
  assert.equal(await a.getByRole('region', { name: 'Policy', exact: true }).getByRole('textbox').count(), 0);
  assert.equal(await a.getByRole('form', { name: 'Fund on localnet' }).count(), 0);
  // By keyboard: Enter on the freeze button moves the focus to the confirmation; Enter again.
  await a.getByRole('button', { name: 'Freeze…' }).focus();
  await a.keyboard.press('Enter');
  await eventually('the confirmation focused', () => a.evaluate(() => document.activeElement?.textContent === 'Confirm freeze'));
  await a.keyboard.press('Enter');
  await headerState(a).filter({ hasText: 'frozen' }).waitFor();
  assert.equal(await a.getByRole('button', { name: /Unfreeze/ }).count(), 0);
  await a.getByText('Only an owner can unfreeze it.').waitFor();
  const history = a.getByRole('region', { name: 'Policy history' });
  await history.locator(`li[data-action="wallet.frozen"][data-actor="user:${addressOf(approver)}"]`).waitFor();
  assert.equal((await api('POST', `/agents/${wallet.id}/unfreeze`, ADMIN_KEY)).status, 200);
  await a.context().close();
});

test('usable at 375 px: no sideways scroll on the list and the wallet page', async () => {
  const p = await signedIn(owner, { width: 375, height: 740 });
  // On a phone the navigation is behind the menu button.
  await p.getByRole('button', { name: /^Menu/ }).click();
  await p.getByRole('link', { name: 'Wallets', exact: true }).click();
  await rowInList(p);
  await p.getByRole('button', { name: 'New wallet…' }).click();
  await p.getByRole('form', { name: 'Create a wallet' }).getByRole('button', { name: 'Add address' }).click();
  assert.ok((await sideways(p)) <= 0, `the list scrolls sideways by ${await sideways(p)} px`);
  await openWallet(p);
  await p.getByRole('region', { name: 'Policy history' }).locator('li').first().waitFor();
  await p.getByRole('region', { name: 'Transactions' }).locator('tr[data-signature]').first().waitFor();
  assert.ok((await sideways(p)) <= 0, `the wallet page scrolls sideways by ${await sideways(p)} px`);
  await p.screenshot({ path: `${SHOTS}wallet-phone.png`, fullPage: true });
  await p.context().close();
});

test('a wallet created with an allowlist keeps its addresses and labels; the list pages by cursor', async () => {
  const p = await signedIn(owner);
  await p.goto(`${BASE}/dashboard/wallets`);
  await p.getByRole('button', { name: 'New wallet…' }).click();
  const form = p.getByRole('form', { name: 'Create a wallet' });
  const tag = `paged-${Date.now().toString(36)}`;
  const [a, b] = [newAddress(), newAddress()];
  await form.getByLabel('Label', { exact: true }).fill(`${tag}-book`);
  await form.getByRole('button', { name: 'Add address' }).click();
  await form.getByLabel('Address 1', { exact: true }).fill(a);
  await form.getByLabel('Label 1 (optional)').fill('Landlord');
  await form.getByRole('button', { name: 'Add address' }).click();
  await form.getByLabel('Address 2', { exact: true }).fill(b);
  await form.getByRole('button', { name: 'Create wallet' }).click();
  await p.waitForURL(/\/dashboard\/wallets\/[0-9a-f-]{36}$/);
  const made = (await api('GET', `/agents/${p.url().split('/').pop()}`, ADMIN_KEY)).body;
  assert.deepEqual([made.policy.allowlist, made.policy.allowlist_labels], [[a, b], { [a]: 'Landlord' }]);

  // 50 more through the API: a search for the tag fills a page, and More brings the rest.
  for (let i = 0; i < 50; i++) {
    const r = await api('POST', '/agents', ADMIN_KEY, { label: `${tag}-${i}` });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  // The newest wallet does not match: the first page unfiltered differs from the search's.
  assert.equal((await api('POST', '/agents', ADMIN_KEY, { label: `other-${Date.now()}` })).status, 201);
  const first = (await api('GET', `/agents?limit=50&q=${tag}`, ADMIN_KEY)).body;
  assert.ok(first.next_cursor, 'one page holds them all');
  const rest = (await api('GET', `/agents?limit=50&q=${tag}&cursor=${encodeURIComponent(first.next_cursor)}`, ADMIN_KEY)).body;
  const want = [...first.agents, ...rest.agents].map((x) => x.id);
  assert.equal(want.length, 51);
  await p.goto(`${BASE}/dashboard/wallets`);
  await p.getByRole('searchbox', { name: 'Search' }).fill(tag);
  const shown = () => p.locator('[data-wallet]').evaluateAll((lis) => lis.map((li) => li.dataset.wallet));
  await eventually('the first page', async () => JSON.stringify(await shown()) === JSON.stringify(first.agents.map((x) => x.id)));
  await p.getByRole('button', { name: 'More wallets' }).click();
  await eventually('both pages', async () => JSON.stringify(await shown()) === JSON.stringify(want));
  assert.equal(await p.getByRole('button', { name: 'More wallets' }).count(), 0);
  await p.context().close();
});

test('no console errors on the wallet pages', assertNoConsoleErrors);
