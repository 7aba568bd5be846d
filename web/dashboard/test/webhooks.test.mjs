// The webhooks pages in a real browser, against the running service and a
// receiver of our own (node:http on 127.0.0.1): what the page creates and
// changes is checked through the API, and what the worker POSTs is checked
// at the receiver (the signature with the secret the page showed once).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import {
  ADMIN_KEY,
  api,
  approver,
  assertNoConsoleErrors,
  BASE,
  eventually,
  owner,
  park,
  SHOTS,
  sideways,
  signedIn,
  useBrowser,
  viewer,
} from './lib.mjs';

useBrowser();

// The receiver records every request and answers `answer` (200 or 500).
const received = [];
let answer = 200;
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    let body = null;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      // a Slack message would be JSON too; anything else stays null
    }
    received.push({ headers: req.headers, raw, body, answered: answer });
    res.writeHead(answer, { 'Content-Type': 'text/plain' });
    res.end(answer === 200 ? 'ok' : 'receiver says no');
  });
});
let hookURL;
before(async () => {
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  // A long path: the pages must wrap it at phone width.
  hookURL = `http://127.0.0.1:${receiver.address().port}/hooks/agentwallet/${'a-rather-long-path-segment-'.repeat(4)}end`;
});
after(() => {
  receiver.closeAllConnections();
  receiver.close();
});

const sign = (secret, raw) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
const testsFor = (id) => received.filter((r) => r.body?.event === 'webhook.test' && r.body.data?.endpoint_id === id);
const deliveries = async (id, q = '') => (await api('GET', `/webhook-endpoints/${id}/deliveries?limit=20${q}`, ADMIN_KEY)).body.deliveries;
const shownDeliveries = (p) => p.locator('ul[aria-label="Deliveries"] > li').evaluateAll((lis) => lis.map((li) => li.dataset.delivery));

// Shared by the tests below, in order: the endpoint the owner creates and its secret.
let endpoint;
let secret;
let parked; // the approval whose approval.pending first failed at the receiver

/** secretShown reads the dialog's secret, closes it and checks it is gone. */
async function secretShown(p, name) {
  const d = p.getByRole('dialog', { name });
  await d.waitFor();
  const s = await d.getByTestId('new-secret').textContent();
  await d.getByRole('button', { name: 'Copy' }).waitFor();
  await d.getByRole('button', { name: 'Done' }).click();
  await d.waitFor({ state: 'detached' });
  assert.equal(await p.getByTestId('new-secret').count(), 0, 'the secret stays on the page');
  return s;
}

async function openEndpoint(kp, opts) {
  const p = await signedIn(kp, opts);
  await p.goto(`${BASE}/dashboard/webhooks/${endpoint.id}`);
  await p.getByRole('heading', { name: 'Delivery log' }).waitFor();
  return p;
}

test('an owner creates an endpoint: the secret is shown once and signs the webhook.test the receiver gets', async () => {
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Webhooks', exact: true }).click();
  await p.getByRole('heading', { name: 'Webhooks' }).waitFor();
  await p.getByRole('button', { name: 'Add an endpoint…' }).click();
  const form = p.getByRole('form', { name: 'Create an endpoint' });
  await form.getByLabel('URL').fill(hookURL);
  await form.getByLabel('Format').selectOption('json');
  assert.ok(await form.getByRole('button', { name: 'Create endpoint' }).isDisabled(), 'an endpoint without events can be created');
  await form.getByRole('checkbox', { name: /^approval\.pending/ }).check();
  await form.getByLabel('Description').fill('browser receiver');
  await form.getByRole('button', { name: 'Create endpoint' }).click();
  secret = await secretShown(p, "New endpoint's signing secret");
  assert.match(secret, /^whsec_/);

  const listed = (await api('GET', '/webhook-endpoints', ADMIN_KEY)).body.endpoints;
  endpoint = listed.find((e) => e.url === hookURL);
  assert.ok(endpoint, JSON.stringify(listed));
  assert.deepEqual(
    [endpoint.format, endpoint.events, endpoint.description, endpoint.enabled],
    ['json', ['approval.pending'], 'browser receiver', true],
  );

  const got = await eventually('the webhook.test at the receiver', async () => testsFor(endpoint.id)[0], 15000);
  assert.equal(got.headers['x-service-signature'], sign(secret, got.raw), 'the signature does not verify with the secret shown');
  assert.equal(got.headers['x-service-event'], 'webhook.test');

  const row = p.locator(`tr[data-endpoint="${endpoint.id}"]`);
  await row.getByText('browser receiver').waitFor();
  await row.getByText('enabled').waitFor();
  await p.screenshot({ path: `${SHOTS}webhooks.png`, fullPage: true });
  await row.getByRole('link').click();
  await p.waitForURL(`**/dashboard/webhooks/${endpoint.id}`);
  // The creation's webhook.test is in the log, succeeded.
  const test = (await deliveries(endpoint.id)).find((d) => d.event === 'webhook.test');
  await p.locator(`li[data-delivery="${test.id}"][data-status="succeeded"]`).waitFor();
  await p.context().close();
});

test('"Send test event" on the endpoint page reaches the receiver', async () => {
  const p = await openEndpoint(owner);
  const before = testsFor(endpoint.id).length;
  await p.getByRole('button', { name: 'Send test event' }).click();
  await p.getByRole('status').getByText('Test event queued.').waitFor({ timeout: 10000 });
  const got = await eventually('another webhook.test', async () => testsFor(endpoint.id)[before], 15000);
  assert.equal(got.headers['x-service-signature'], sign(secret, got.raw));
  await eventually('two test deliveries in the log', async () => {
    const ids = (await deliveries(endpoint.id)).filter((d) => d.event === 'webhook.test').map((d) => d.id);
    return ids.length >= 2 && (await shownDeliveries(p)).filter((id) => ids.includes(id)).length === ids.length;
  });
  await p.context().close();
});

test('a delivery the receiver refuses (500) shows in the timeline; after it recovers, Replay delivers the same event', async () => {
  answer = 500;
  const p = await openEndpoint(owner);
  parked = await park(1.5, 'webhook check');
  const failed = await eventually(
    'the approval.pending at the receiver',
    async () => received.find((r) => r.body?.event === 'approval.pending' && r.body.data?.approval_id === parked.id),
    15000,
  );
  assert.equal(failed.answered, 500);
  assert.equal(failed.headers['x-service-signature'], sign(secret, failed.raw));
  const first = (await deliveries(endpoint.id)).find((d) => d.event_id === failed.body.event_id);
  assert.ok(first, 'no delivery of the event');
  const li = p.locator(`li[data-delivery="${first.id}"]`);
  await li.waitFor();
  assert.notEqual(await li.getAttribute('data-status'), 'succeeded');
  await li.getByRole('button', { name: 'Details' }).click();
  const attempt = li.locator('li[data-attempt="1"]');
  await attempt.getByTestId('status-code').getByText('500').waitFor();
  await attempt.getByText('receiver says no').waitFor();
  await attempt.getByText(/\d+ ms/).waitFor();
  assert.equal(await li.getByRole('button', { name: 'Hide' }).getAttribute('aria-expanded'), 'true');
  await p.screenshot({ path: `${SHOTS}webhook-delivery.png`, fullPage: true });

  answer = 200;
  const before = received.length;
  await li.getByRole('button', { name: 'Replay' }).click();
  const replay = await eventually(
    'the replay, succeeded',
    async () => (await deliveries(endpoint.id)).find((d) => d.replay_of === first.id && d.status === 'succeeded'),
    15000,
  );
  assert.equal(replay.event_id, first.event_id);
  await p.locator(`li[data-delivery="${replay.id}"][data-status="succeeded"]`).waitFor();
  const again = received.slice(before).find((r) => r.headers['x-service-delivery'] === replay.id);
  assert.ok(again, 'the receiver did not get the replay');
  assert.equal(again.body.event_id, failed.body.event_id);
  assert.equal(again.answered, 200);
  assert.equal(again.raw.toString(), failed.raw.toString(), 'a replay POSTs the same body');
  await p.context().close();
});

test('the payload shown is the exact body the receiver got', async () => {
  const p = await openEndpoint(owner);
  const got = received.find((r) => r.body?.event === 'approval.pending' && r.body.data?.approval_id === parked.id);
  const d = (await deliveries(endpoint.id)).find((x) => x.event_id === got.body.event_id);
  const li = p.locator(`li[data-delivery="${d.id}"]`);
  await li.getByRole('button', { name: 'Details' }).click();
  const pre = li.getByTestId('payload');
  await pre.waitFor({ timeout: 10000 });
  assert.deepEqual(JSON.parse(await pre.textContent()), got.body);
  assert.deepEqual(Object.keys(got.body), ['event', 'event_id', 'timestamp', 'data']);
  await p.context().close();
  // Tidy: the parked approval is not left pending for other files.
  await api('POST', `/approvals/${parked.id}/reject`, ADMIN_KEY, { note: 'webhook test done' });
});

test('the log pages by cursor ("Load more") and the status filter narrows it like the API does', async () => {
  // Enough deliveries for a second page (the page asks for 20): each save through the API sends a webhook.test.
  for (let i = 0; i < 20; i++) assert.equal((await api('PATCH', `/webhook-endpoints/${endpoint.id}`, ADMIN_KEY, { enabled: true })).status, 200);
  const all = await eventually(
    'every delivery done',
    async () => {
      const ds = (await api('GET', `/webhook-endpoints/${endpoint.id}/deliveries?limit=100`, ADMIN_KEY)).body.deliveries;
      return ds.length > 20 && ds.every((d) => d.status !== 'pending') && ds;
    },
    45000,
  );
  const p = await openEndpoint(viewer);
  const ids = (ds) => JSON.stringify(ds.map((d) => d.id));
  await eventually('the first page', async () => JSON.stringify(await shownDeliveries(p)) === ids(all.slice(0, 20)));
  await p.getByRole('button', { name: 'Load more' }).click();
  await eventually('every page', async () => JSON.stringify(await shownDeliveries(p)) === ids(all));
  assert.equal(await p.getByRole('button', { name: 'Load more' }).count(), 0, 'more after the last page');
  for (const status of ['succeeded', 'pending', 'failed', '']) {
    await p.getByLabel('Status').selectOption(status);
    await eventually(`the ${status || 'any'} deliveries`, async () => {
      const want = (await deliveries(endpoint.id, status ? `&status=${status}` : '')).map((d) => d.id);
      const shown = await shownDeliveries(p);
      return JSON.stringify(shown) === JSON.stringify(want) && (status !== 'succeeded' || want.length > 0);
    });
  }
  await p.context().close();
});

test('an owner edits the endpoint (PATCH) and rotates its secret: the new one is shown once and signs', async () => {
  const p = await openEndpoint(owner);
  await p.getByRole('button', { name: 'Edit' }).click();
  const form = p.getByRole('form', { name: 'Edit the endpoint' });
  assert.equal(await form.getByLabel('URL').inputValue(), hookURL);
  await form.getByLabel('Description').fill('edited in the browser');
  await form.getByRole('checkbox', { name: /^tx\.sent/ }).check();
  await form.getByRole('button', { name: 'Save' }).click();
  await p.getByTestId('description').getByText('edited in the browser').waitFor();
  const saved = (await api('GET', `/webhook-endpoints/${endpoint.id}`, ADMIN_KEY)).body;
  assert.deepEqual(
    [saved.description, saved.events, saved.enabled, saved.url],
    ['edited in the browser', ['tx.sent', 'approval.pending'], true, hookURL],
  );

  await p.getByRole('button', { name: 'Rotate secret…' }).click();
  await p.getByRole('button', { name: 'Confirm rotation' }).click();
  const next = await secretShown(p, 'New signing secret');
  assert.match(next, /^whsec_/);
  assert.notEqual(next, secret);
  await p.getByText(/still signs until/).waitFor();
  // A save through the API sends a webhook.test: signed by the new secret, and the old one beside it.
  const before = testsFor(endpoint.id).length;
  assert.equal((await api('PATCH', `/webhook-endpoints/${endpoint.id}`, ADMIN_KEY, { enabled: true })).status, 200);
  const got = await eventually('a webhook.test after the rotation', async () => testsFor(endpoint.id)[before], 15000);
  assert.equal(got.headers['x-service-signature'], sign(next, got.raw));
  assert.equal(got.headers['x-service-signature-previous'], sign(secret, got.raw));
  secret = next;
  await p.context().close();
});

test('an approver and a viewer read the endpoints and the log but have no buttons to change them', async () => {
  for (const kp of [approver, viewer]) {
    const p = await signedIn(kp);
    await p.getByRole('link', { name: 'Webhooks', exact: true }).click();
    const row = p.locator(`tr[data-endpoint="${endpoint.id}"]`);
    await row.waitFor();
    assert.equal(await p.getByRole('button', { name: 'Add an endpoint…' }).count(), 0);
    assert.equal(await p.getByRole('form').count(), 0);
    await row.getByRole('link').click();
    await p.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const li = p.locator('ul[aria-label="Deliveries"] > li').first();
    await li.waitFor();
    await li.getByRole('button', { name: 'Details' }).click();
    await li.locator('li[data-attempt="1"]').waitFor();
    assert.equal(await p.getByRole('button', { name: /^(Edit|Send test event|Rotate secret…|Delete…|Replay)$/ }).count(), 0);
    assert.equal(await p.getByRole('form').count(), 0);
    await p.context().close();
  }
});

test('usable at 375 px (no sideways scroll) and by keyboard', async () => {
  const p = await signedIn(owner, { width: 375, height: 740 });
  await p.goto(`${BASE}/dashboard/webhooks`);
  await p.locator(`tr[data-endpoint="${endpoint.id}"]`).waitFor();
  await p.getByRole('button', { name: 'Add an endpoint…' }).click();
  await p.getByRole('form', { name: 'Create an endpoint' }).getByLabel('URL').fill(hookURL);
  assert.ok((await sideways(p)) <= 0, `the list scrolls sideways by ${await sideways(p)} px at 375 px`);
  await p.screenshot({ path: `${SHOTS}webhooks-phone.png`, fullPage: true });

  await p.goto(`${BASE}/dashboard/webhooks/${endpoint.id}`);
  await p.locator('ul[aria-label="Deliveries"] > li').first().waitFor();
  // Keyboard: Tab reaches the first Details button and Enter opens it.
  for (let i = 0; i < 40; i++) {
    await p.keyboard.press('Tab');
    if ((await p.evaluate(() => document.activeElement?.textContent)) === 'Details') break;
  }
  assert.equal(await p.evaluate(() => document.activeElement?.textContent), 'Details');
  await p.keyboard.press('Enter');
  await p.locator('[aria-expanded="true"]').first().waitFor();
  await p.locator('ol[aria-label="Attempts"]').first().waitFor();
  await p.getByTestId('payload').first().waitFor();
  assert.ok((await sideways(p)) <= 0, `the endpoint page scrolls sideways by ${await sideways(p)} px at 375 px`);
  await p.screenshot({ path: `${SHOTS}webhook-phone.png`, fullPage: true });
  await p.context().close();
});

test('an owner deletes the endpoint after confirming: gone from the page and the API', async () => {
  const p = await openEndpoint(owner);
  await p.getByRole('button', { name: 'Delete…' }).click();
  await p.getByRole('button', { name: 'Cancel' }).click();
  assert.equal((await api('GET', `/webhook-endpoints/${endpoint.id}`, ADMIN_KEY)).status, 200, 'cancel deleted');
  await p.getByRole('button', { name: 'Delete…' }).click();
  await p.getByRole('button', { name: 'Confirm delete' }).click();
  await p.waitForURL('**/dashboard/webhooks');
  await p.getByRole('heading', { name: 'Webhooks' }).waitFor();
  await p.locator(`tr[data-endpoint="${endpoint.id}"]`).waitFor({ state: 'detached' });
  assert.equal((await api('GET', `/webhook-endpoints/${endpoint.id}`, ADMIN_KEY)).status, 404);
  const listed = (await api('GET', '/webhook-endpoints', ADMIN_KEY)).body.endpoints;
  assert.equal(
    listed.find((e) => e.id === endpoint.id),
    undefined,
  );
  await p.context().close();
});

test('no console errors on the webhooks pages', assertNoConsoleErrors);
