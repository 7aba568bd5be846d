// m-of-n approvals in a real browser: a wallet whose payments need two
// people. Each signs in with their own wallet and approves in turn; the
// pages count the approves, the first person sees theirs but cannot
// approve again, and the payment lands on chain after the second.
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
  signedIn,
  useBrowser,
} from './lib.mjs';

useBrowser();

test('two people sign in with their wallets and approve in turn: the page shows the count, and the payment lands after the second', async () => {
  const created = await api('POST', '/agents', ADMIN_KEY, {
    label: 'two-person rule',
    policy: { approval_threshold_usdc: 0, approvals_required: 2 },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const wallet = created.body.id;
  assert.equal((await api('POST', `/wallets/${wallet}/fund`, ADMIN_KEY, { usdc: 10, sol: 1 })).status, 200);
  const to = newAddress();
  const sent = await api('POST', `/agents/${wallet}/send`, AGENT_KEY, { to, amount: 3, memo: 'needs two people' });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const id = sent.body.approval_id;

  // The first person: the inbox and the page say 0 of 2.
  const first = await signedIn(owner);
  await first.getByRole('link', { name: /^Approvals/ }).click();
  const row = first.locator(`[data-approval="${id}"]`);
  assert.match(await row.getByTestId('quorum').textContent(), /0 of 2 approvals/);
  await row.getByRole('link', { name: 'Review' }).click();
  assert.equal(await first.getByTestId('quorum').textContent(), '0 of 2 approvals');
  await first.getByLabel('Note (optional)').fill('first of two');
  await first.getByRole('button', { name: 'Approve…' }).click();
  assert.match(await first.getByTestId('quorum-now').textContent(), /Your approve would be 1 of 2/);
  await first.getByText('It then has 1 of 2 approvals and is sent after the last one.').waitFor();
  await first.getByRole('button', { name: 'Confirm approval' }).click();
  await eventually('1 of 2', async () => (await first.getByTestId('quorum').textContent()) === '1 of 2 approvals');
  assert.equal(await first.getByTestId('status').textContent(), 'pending');
  // Seen, not to be done again: the approve button is off, reject stays.
  await first.getByTestId('voted').waitFor();
  assert.ok(await first.getByRole('button', { name: 'Approved by you' }).isDisabled());
  // Reject comes back once the approve's own answer is in (the stream may
  // show the vote before it).
  await eventually('Reject enabled after the approve', () => first.getByRole('button', { name: 'Reject' }).isEnabled());
  assert.match(await first.getByRole('list', { name: 'Approved by' }).textContent(), /you · “first of two”/);
  await first.screenshot({ path: `${SHOTS}quorum-1-of-2.png`, fullPage: true });
  assert.equal(await chainUSDC(to), 0);
  const half = (await api('GET', `/approvals/${id}`, ADMIN_KEY)).body;
  assert.equal(half.status, 'pending');
  assert.deepEqual(
    half.approvals.map((v) => v.by),
    [`user:${addressOf(owner)}`],
  );
  // The API refuses the same person again.
  const again = await first.evaluate(async (id) => {
    const s = await (await fetch('/api/dashboard/v1/session')).json();
    const r = await fetch(`/api/public/v1/approvals/${id}/approve`, { method: 'POST', headers: { 'X-CSRF-Token': s.csrf_token } });
    return r.status;
  }, id);
  assert.equal(again, 409);

  // The second person: 1 of 2, who approved; their approve sends it.
  const second = await signedIn(approver);
  await second.goto(`${BASE}/dashboard/approvals/${id}`);
  await eventually('1 of 2', async () => (await second.getByTestId('quorum').textContent()) === '1 of 2 approvals');
  assert.doesNotMatch(await second.getByRole('list', { name: 'Approved by' }).textContent(), /you/);
  await second.getByRole('button', { name: 'Approve…' }).click();
  await second.getByText('Approve and send').waitFor();
  await second.getByRole('button', { name: 'Confirm approval' }).click();
  await second.getByTestId('signature').waitFor();
  assert.equal(await second.getByTestId('status').textContent(), 'sent');
  assert.equal(await second.getByTestId('quorum').textContent(), '2 of 2 approvals');
  await second.screenshot({ path: `${SHOTS}quorum-sent.png`, fullPage: true });
  assert.equal(await eventually('the transfer on chain', async () => (await chainUSDC(to)) || false), 3_000_000);
  const done = (await api('GET', `/approvals/${id}`, ADMIN_KEY)).body;
  assert.deepEqual(
    done.approvals.map((v) => v.by),
    [`user:${addressOf(owner)}`, `user:${addressOf(approver)}`],
  );
  assert.equal(done.approved_by, `user:${addressOf(approver)}`);
  // The first person's page follows by itself.
  await eventually('the first page shows it sent', async () => (await first.getByTestId('status').textContent()) === 'sent');
  await first.context().close();
  await second.context().close();
  assert.equal(await chainUSDC(to), 3_000_000);
});

test('no console errors on any page', assertNoConsoleErrors);
