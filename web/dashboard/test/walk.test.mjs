// A walk through every page of the dashboard at desktop and phone width,
// as an owner: each page loads without a console error and without
// scrolling sideways, and leaves a screenshot (test/screenshots/walk/; make
// screenshots copies them to docs/screenshots/). It runs after the other
// files, so the account has wallets, payments, approvals and deliveries.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync } from 'node:fs';
import { ADMIN_KEY, BASE, SHOTS, WALLET_ID, api, assertNoConsoleErrors, owner, page, park, signIn, useBrowser } from './lib.mjs';

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

/** pages lists every page with a path that shows real data. */
async function pages() {
  const { id: approval } = await park(1.2, 'walk');
  const { status, body } = await api('POST', '/webhook-endpoints', ADMIN_KEY, {
    url: `http://127.0.0.1:${receiver.address().port}/hook`,
    events: ['tx.sent', 'approval.pending'],
    description: 'walk receiver',
  });
  assert.equal(status, 201, JSON.stringify(body));
  return [
    ['overview', '/'],
    ['approvals', '/approvals'],
    ['approval', `/approvals/${approval}`],
    ['wallets', '/wallets'],
    ['wallet', `/wallets/${WALLET_ID}`],
    ['transactions', '/transactions'],
    ['webhooks', '/webhooks'],
    ['webhook', `/webhooks/${body.id}`],
    ['keys', '/keys'],
    ['users', '/users'],
    ['audit', '/audit'],
    ['analytics', '/analytics'],
  ];
}

test('every page at desktop and phone width: no console error, no sideways scroll', async () => {
  const all = await pages();
  for (const size of WIDTHS) {
    const p = await page(owner, size);
    await signIn(p);
    for (const [name, path] of all) {
      await p.goto(`${BASE}/dashboard${path}`);
      await p.locator('main h1').first().waitFor();
      await p.waitForLoadState('networkidle');
      await p.waitForTimeout(300); // the last answers render
      assert.equal(await p.getByText('Loading…').count(), 0, `${name} at ${size.name} still loading`);
      await p.screenshot({ path: `${WALK}${name}-${size.name}.png`, fullPage: true });
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${name} scrolls sideways by ${overflow} px at ${size.width} px`);
    }
    await p.context().close();
  }
});

test('no console errors on the walk', assertNoConsoleErrors);
