// Live, not polled: the dashboard follows the event stream. A payment an
// agent parks appears in a signed-in approver's inbox within a second, with
// polling off; another person's decision appears on the first person's page
// within a second; with the stream blocked the page says so and polls.
//
// Latencies are measured from the API's answer (as Node sees it) to the
// moment the page's DOM shows the change (a MutationObserver in the page,
// Date.now() on both sides: one machine, one clock). The event commits before
// the API answers, so a page may show it before Node has read the answer: a
// negative latency.
import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoConsoleErrors, BASE, consoleErrors, owner, approver, page, park, SHOTS, signedIn, signIn, useBrowser } from './lib.mjs';

useBrowser();

const EVENTS = '/api/dashboard/v1/events';
/** POLL is the dashboard's polling interval for the inbox (src/services/queryClient.ts). */
const POLL = 2000;
const LIVE = 'Live';
const POLLING = 'Updating every few seconds';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * appears resolves with the time (Date.now() in the page) when an element
 * matching selector whose text includes (or, exact, equals) text is in the
 * page; it starts watching before it resolves its first promise.
 */
async function appears(p, selector, text, { exact = false, ms = 15000 } = {}) {
  const handle = await p.evaluateHandle(
    ([selector, text, exact]) => {
      const found = () =>
        [...document.querySelectorAll(selector)].some((e) => (exact ? e.textContent.trim() === text : e.textContent.includes(text)));
      return {
        at: new Promise((resolve) => {
          if (found()) return resolve(Date.now());
          const o = new MutationObserver(() => {
            if (found()) {
              o.disconnect();
              resolve(Date.now());
            }
          });
          o.observe(document.body, { subtree: true, childList: true, characterData: true });
        }),
      };
    },
    [selector, text, exact],
  );
  return () =>
    Promise.race([
      handle.evaluate((h) => h.at),
      sleep(ms).then(() => {
        throw new Error(`waited ${ms} ms in vain for ${selector} with "${text}"`);
      }),
    ]);
}

/** requests counts the page's requests whose path (without the query) is path, from now until reset. */
function requests(p, path) {
  let n = 0;
  p.on('request', (r) => {
    if (new URL(r.url()).pathname === path) n++;
  });
  return {
    get count() {
      return n;
    },
    reset() {
      n = 0;
    },
  };
}

const streamSays = (p, text) =>
  p
    .getByTestId('stream')
    .filter({ hasText: new RegExp(`^${text}$`) })
    .waitFor({ timeout: 10000 });

/** parkTimed parks a payment and says when the request started and when Node had its answer. */
async function parkTimed(amount, memo) {
  const sent = Date.now();
  const parked = await park(amount, memo);
  return { ...parked, sent, answered: Date.now() };
}

/** report logs a latency, and keeps it beside the screenshots (test/screenshots/live-latency.txt). */
function report(what, ms) {
  const line = `${new Date().toISOString()} ${what}: ${ms} ms`;
  console.log(`# ${line}`);
  appendFileSync(`${SHOTS}live-latency.txt`, `${line}\n`);
}

test('a payment an agent parks appears in an approver’s inbox within 1 s, from the stream, with polling off', { timeout: 60000 }, async () => {
  const p = await page(approver);
  const lists = requests(p, '/api/public/v1/approvals');
  await signIn(p);
  await p.getByRole('link', { name: /^Approvals/ }).click();
  await p.getByRole('heading', { name: 'Approvals' }).waitFor();
  await streamSays(p, LIVE);

  // Live, the inbox is not polled: no read of the list for longer than the polling interval.
  await sleep(500); // the catch-up read that going live makes
  lists.reset();
  await sleep(POLL + 1000);
  assert.equal(lists.count, 0, 'the inbox polled while the stream was live');

  const memo = `live ${Date.now()}`;
  const shown = await appears(p, '[data-approval]', memo);
  const { id, sent, answered } = await parkTimed(1.25, memo);
  const at = await shown();
  const latency = at - answered;
  report('parked payment → approver’s inbox, from the send’s answer', latency);
  report('parked payment → approver’s inbox, from the send’s start', at - sent);
  assert.ok(latency <= 1000, `shown ${latency} ms after the answer`);
  assert.equal(await p.locator(`[data-approval="${id}"]`).count(), 1);
  // One read of the list, the one the event asked for; none since the page was live.
  assert.equal(lists.count, 1, `the inbox read its list ${lists.count} times for one event`);
  await streamSays(p, LIVE);
});

test('another person’s decision appears on the first person’s page within 1 s', { timeout: 90000 }, async () => {
  const { id } = await park(1.5, 'decided elsewhere');
  const first = await page(approver);
  const reads = requests(first, `/api/public/v1/approvals/${id}`);
  await signIn(first);
  await first.goto(`${BASE}/dashboard/approvals/${id}`);
  await first.getByRole('button', { name: 'Approve…' }).waitFor();
  await streamSays(first, LIVE);
  assert.equal(await first.getByTestId('status').textContent(), 'pending');
  await sleep(500);
  reads.reset();
  const quiet = Date.now();

  // The owner, in another browser, approves it.
  const second = await signedIn(owner);
  await second.goto(`${BASE}/dashboard/approvals/${id}`);
  await second.getByLabel('Note (optional)').fill('approved from the other desk');
  await second.getByRole('button', { name: 'Approve…' }).click();
  await sleep(Math.max(0, quiet + POLL + 1000 - Date.now()));
  // Meanwhile the first page, live, read the approval not once.
  assert.equal(reads.count, 0, 'the approval page polled while the stream was live');

  const shown = await appears(first, '[data-testid="status"]', 'sent', { exact: true });
  const answer = second.waitForResponse(
    (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/api/public/v1/approvals/${id}/approve`,
  );
  const clicked = Date.now();
  await second.getByRole('button', { name: 'Confirm approval' }).click();
  const res = await answer;
  const answered = Date.now();
  assert.equal(res.status(), 200, await res.text());
  const at = await shown();
  const latency = at - answered;
  report('approval by another person → first person’s page, from the approve’s answer', latency);
  report('approval by another person → first person’s page, from the click', at - clicked);
  assert.ok(latency <= 1000, `shown ${latency} ms after the answer`);
  assert.equal(await second.getByTestId('status').textContent(), 'sent');
  assert.ok(reads.count >= 1, 'the event asked for the approval again');
});

test('with the stream blocked the page says it polls, and a parked payment still appears', { timeout: 60000 }, async () => {
  const p = await page(approver);
  let blocked = 0;
  await p.route(`**${EVENTS}**`, (route) => {
    blocked++;
    return route.abort();
  });
  const lists = requests(p, '/api/public/v1/approvals');
  await signIn(p);
  await p.getByRole('link', { name: /^Approvals/ }).click();
  await p.getByRole('heading', { name: 'Approvals' }).waitFor();
  await streamSays(p, POLLING);
  assert.ok(blocked >= 1, 'the page did not try the stream');
  // Still polling a while later: the inbox reads its list every few seconds.
  lists.reset();
  await sleep(POLL + 1000);
  assert.ok(lists.count >= 1, 'the inbox did not poll with the stream down');
  await streamSays(p, POLLING);

  const memo = `polled ${Date.now()}`;
  const shown = await appears(p, '[data-approval]', memo);
  const { id, answered } = await parkTimed(1.1, memo);
  const at = await shown();
  const latency = at - answered;
  report('parked payment → inbox by polling (stream blocked), from the send’s answer', latency);
  assert.ok(latency <= POLL + 1500, `shown ${latency} ms after the answer, past the polling interval`);
  assert.equal(await p.locator(`[data-approval="${id}"]`).count(), 1);
  // The stream was refused, so its errors are the browser's log of the blocked requests.
  for (let i = consoleErrors.length - 1; i >= 0; i--) if (/ERR_FAILED/.test(consoleErrors[i])) consoleErrors.splice(i, 1);
});

test('no errors in the console', () => {
  assertNoConsoleErrors();
});
