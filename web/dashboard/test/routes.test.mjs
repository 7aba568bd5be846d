// The pages' state in the URL: a deep link opens a page with its filter or
// tab, back and forward restore them, and values the page does not know
// are dropped from the URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY, AGENT_KEY, api, assertNoConsoleErrors, BASE, eventually, newAddress, signedIn, useBrowser, viewer, WALLET_ID } from './lib.mjs';

useBrowser();

const path = (p) => new URL(p.url()).pathname + new URL(p.url()).search;
/** at waits until the page's path and query are want. */
const at = (p, want) => p.waitForURL((u) => u.pathname + u.search === want);

test('a filtered list is a link: the transactions filter and the audit filter open from the URL, and back restores the last one', async () => {
  const sent = await api('POST', `/agents/${WALLET_ID}/send`, AGENT_KEY, { to: newAddress(), amount: 0.25, memo: 'routes' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const p = await signedIn(viewer);
  const all = (await api('GET', '/transactions?limit=50', ADMIN_KEY)).body.transactions;
  assert.ok(all.length > 0, 'no transactions to filter');
  const status = all[0].status;
  const some = (await api('GET', `/transactions?limit=50&status=${status}`, ADMIN_KEY)).body.transactions;
  await p.goto(`${BASE}/dashboard/transactions?status=${status}`);
  const shown = () => p.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.signature));
  await eventually(`only ${status}`, async () => JSON.stringify(await shown()) === JSON.stringify(some.map((t) => t.signature)));
  assert.equal(await p.getByLabel('Status').inputValue(), status);

  await p.goto(`${BASE}/dashboard/audit?action=session.signed_in`);
  assert.equal(await p.getByLabel('Action').inputValue(), 'session.signed_in');
  const actions = () => p.locator('tbody tr td:nth-child(4)').allTextContents();
  await eventually('only sign-ins', async () => {
    const a = await actions();
    return a.length > 0 && a.every((x) => x === 'session.signed_in');
  });
  await p.getByLabel('Action').fill('');
  await p.getByRole('button', { name: 'Filter' }).click();
  await at(p, `/dashboard/audit`);
  await eventually('every action', async () => (await actions()).some((x) => x !== 'session.signed_in'));
  await p.goBack();
  await at(p, `/dashboard/audit?action=session.signed_in`);
  await eventually('the form follows back', async () => (await p.getByLabel('Action').inputValue()) === 'session.signed_in');
  await eventually('only sign-ins again', async () => (await actions()).every((x) => x === 'session.signed_in'));
  await p.goBack();
  await at(p, `/dashboard/transactions?status=${status}`);
  await eventually('the transactions filter again', async () => (await p.getByLabel('Status').inputValue()) === status);
  await p.context().close();
});

test('the approvals tab is in the URL, and back returns to the other tab', async () => {
  const p = await signedIn(viewer);
  await p.goto(`${BASE}/dashboard/approvals?tab=decided`);
  const decided = p.getByRole('tab', { name: 'Decided' });
  await eventually('the decided tab', async () => (await decided.getAttribute('aria-selected')) === 'true');
  await p.getByRole('tab', { name: /^Pending/ }).click();
  await at(p, `/dashboard/approvals`);
  assert.equal(await decided.getAttribute('aria-selected'), 'false');
  await p.goBack();
  await at(p, `/dashboard/approvals?tab=decided`);
  await eventually('decided again', async () => (await decided.getAttribute('aria-selected')) === 'true');
  await p.context().close();
});

test('values the page does not know leave the URL; an unknown path or id shows the overview', async () => {
  const p = await signedIn(viewer);
  await p.goto(`${BASE}/dashboard/transactions?status=bogus&since=yesterday&until=2026-01-31`);
  await eventually('the URL cleaned', async () => path(p) === '/dashboard/transactions?until=2026-01-31');
  assert.equal(await p.getByLabel('Status').inputValue(), '');
  assert.equal(await p.getByLabel('Until').inputValue(), '2026-01-31');
  for (const unknown of ['/no/such/page', '/wallets/not-a-wallet', '/approvals/42']) {
    await p.goto(`${BASE}/dashboard${unknown}`);
    await p.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await p.getByRole('navigation', { name: 'Main' }).waitFor();
  }
  await p.context().close();
});

test('no console errors on the routes', assertNoConsoleErrors);
