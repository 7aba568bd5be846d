// The policy's optional rules in a real browser: an owner sets the
// approvals needed, a weekly limit, a payment count and active hours in
// the editor, reads them old → new, saves, and the API has them; a send
// tried afterwards names the rule that decides it; clearing them sends
// "none", which the API removes. A new wallet takes the same rules on its
// form, bounded the same way, and the API has them. On a phone, in dark
// mode, the fields fit and pass axe. The owner also links a person to a
// Slack member id on the users page, and unlinks them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  accessible,
  addressOf,
  ADMIN_KEY,
  api,
  approver,
  BASE,
  consoleErrors,
  newAddress,
  owner,
  page,
  SHOTS,
  sideways,
  signedIn,
  signIn,
  useBrowser,
  viewer,
} from './lib.mjs';

useBrowser();

let wallet; // the wallet this file's tests share, made through the API
const HOURS = { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'sat'], from: '08:30', to: '20:00' };
const text = (l) => l.textContent().then((t) => t.replace(/\s+/g, ' ').trim());

const openPolicy = async (p) => {
  await p.goto(`${BASE}/dashboard/wallets/${wallet}`);
  const policy = p.getByRole('region', { name: 'Policy', exact: true });
  await policy.getByRole('button', { name: 'Save policy' }).waitFor();
  return policy;
};

test('an owner sets approvals, a weekly limit, a count and active hours; old → new, saved, in the API; a send tried names the deciding rule', async () => {
  const made = await api('POST', '/agents', ADMIN_KEY, { label: `rules-${Date.now().toString(36)}` });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  wallet = made.body.id;

  const p = await signedIn(owner, { height: 1800 });
  const policy = await openPolicy(p);
  const save = policy.getByRole('button', { name: 'Save policy' });
  // The account's owners and approvers bound the approvals.
  const people = (await api('GET', '/users', ADMIN_KEY)).body.users.filter((u) => u.role !== 'viewer').length;
  await policy.getByText(`people who must approve a parked payment (1 to ${people})`).waitFor();
  await policy.getByLabel('Approvals needed').fill(String(people + 1));
  await policy.getByText(`At most ${people}: the account's owners and approvers.`).waitFor();
  assert.ok(await save.isDisabled(), 'Save is enabled with too many approvals');
  await policy.getByLabel('Approvals needed').fill('2');
  await policy.getByLabel('Weekly limit').fill('5');
  await policy.getByLabel('Payments per hour').fill('3');

  await policy.getByRole('button', { name: 'Set active hours' }).click();
  const zone = policy.getByRole('combobox', { name: 'Time zone' });
  await zone.fill('Mars/Olympus');
  await policy.getByText('Not a time zone: pick one from the list (Region/City, or UTC).').waitFor();
  assert.ok(await save.isDisabled(), 'Save is enabled with an unknown zone');
  await zone.fill(HOURS.timezone);
  await policy.getByLabel('Opens at').fill(HOURS.from);
  await policy.getByLabel('Closes at').fill(HOURS.to);
  await policy.getByRole('checkbox', { name: 'Friday' }).uncheck();
  await policy.getByRole('checkbox', { name: 'Saturday' }).check();
  await policy.getByRole('radio', { name: 'Parked for approval, whatever its amount' }).check();

  const diff = policy.getByTestId('diff');
  const change = (field) => text(diff.locator(`[data-change="${field}"]`));
  assert.equal(await change('approvals_required'), 'Approvals needed: 1 person → 2 people');
  assert.equal(await change('weekly_limit_usdc'), 'Weekly limit: no limit → 5.00 USDC');
  assert.equal(await change('max_tx_per_hour'), 'Payments per hour: no limit → 3 payments');
  assert.equal(await change('active_hours'), 'Active hours: any time → Mon–Thu, Sat 08:30–20:00 (America/New_York)');
  assert.equal(await change('outside_active_hours'), 'Outside active hours: blocked → parked for approval');
  assert.equal(await diff.locator('li').count(), 5);
  await policy.screenshot({ path: `${SHOTS}policy-rules.png` });

  await save.click();
  await policy.getByText('Saved.').waitFor();
  const { body } = await api('GET', `/agents/${wallet}`, ADMIN_KEY);
  assert.deepEqual(body.policy, {
    daily_limit_usdc: 100,
    max_tx_usdc: 25,
    approval_threshold_usdc: 10,
    allowlist: [],
    allowlist_labels: {},
    approvals_required: 2,
    weekly_limit_usdc: 5,
    monthly_limit_usdc: null,
    max_tx_per_hour: 3,
    max_tx_per_day: null,
    active_hours: HOURS,
    outside_active_hours: 'approve',
    assets: ['USDC'],
    daily_limit_eur: null,
    max_tx_eur: null,
    approval_threshold_eur: null,
    weekly_limit_eur: null,
    monthly_limit_eur: null,
  });
  const entry = p.getByRole('region', { name: 'Policy history' }).locator('li[data-action="policy.updated"]').first();
  assert.equal(await text(entry.locator('[data-change="weekly_limit_usdc"]')), 'Weekly limit: no limit → 5.00 USDC');

  // A send over the week's limit, under the saved policy: the page names the rule as the API does.
  const to = newAddress();
  const tryIt = policy.getByRole('form', { name: 'Try a send' });
  await tryIt.getByLabel('To', { exact: true }).fill(to);
  await tryIt.getByLabel('Amount', { exact: true }).fill('6');
  await tryIt.getByRole('button', { name: 'Try it' }).click();
  const outcome = policy.getByTestId('preview-outcome');
  await outcome.locator('[data-outcome="blocked"]').waitFor();
  const asked = await api('POST', `/agents/${wallet}/send/preview`, ADMIN_KEY, { to, amount: 6 });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.deepEqual([asked.body.outcome, asked.body.reason, asked.body.rule], ['blocked', 'exceeds_weekly_limit', 'weekly_limit_usdc']);
  assert.equal(await text(outcome), 'blocked exceeds_weekly_limit · decided by Weekly limit');
  assert.equal(await outcome.locator('[data-rule]').getAttribute('data-rule'), 'weekly_limit_usdc');
  assert.equal(await text(policy.getByTestId('preview-remaining-week')), '5.00 USDC');
  assert.equal(await text(policy.getByTestId('preview-hour')), `${asked.body.payments_last_hour} of 3`);
  assert.equal(await text(policy.getByTestId('preview-within')), asked.body.within_active_hours ? 'yes' : 'no');
  assert.equal(await text(policy.getByTestId('preview-approvals')), '2');
  assert.equal(await policy.locator('[data-deciding]').count(), 1);
  await policy.screenshot({ path: `${SHOTS}policy-rules-preview.png` });

  // Within the limit, a proposal without the week's limit: the proposal (null: removed) decides another way.
  await policy.getByLabel('Weekly limit').fill('');
  await tryIt.getByLabel('Amount', { exact: true }).fill('4');
  await tryIt.getByRole('button', { name: 'Try it' }).click();
  const proposed = await api('POST', `/agents/${wallet}/send/preview`, ADMIN_KEY, { to, amount: 4, policy: { weekly_limit_usdc: null } });
  assert.equal(proposed.status, 200, JSON.stringify(proposed.body));
  assert.equal(proposed.body.remaining_week_usdc, null);
  await outcome.locator(`[data-outcome="${proposed.body.outcome}"]`).waitFor();
  assert.equal(await text(policy.getByTestId('preview-remaining-week')), 'no weekly limit');
  await policy.getByTestId('preview-current').waitFor();

  // Clearing the count and removing the hours too: each "none" is sent and the API removes it.
  await policy.getByLabel('Payments per hour').fill('');
  await policy.getByRole('button', { name: 'Remove active hours' }).click();
  assert.equal(await change('weekly_limit_usdc'), 'Weekly limit: 5.00 USDC → no limit');
  assert.equal(await change('max_tx_per_hour'), 'Payments per hour: 3 payments → no limit');
  assert.equal(await change('active_hours'), 'Active hours: Mon–Thu, Sat 08:30–20:00 (America/New_York) → any time');
  await save.click();
  await policy.getByText('Saved.').waitFor();
  const after = (await api('GET', `/agents/${wallet}`, ADMIN_KEY)).body.policy;
  assert.deepEqual(
    [after.weekly_limit_usdc, after.max_tx_per_hour, after.active_hours, after.approvals_required, after.outside_active_hours],
    [null, null, null, 2, 'approve'],
  );
  await p.context().close();
});

test("the service's refusal shows beside the form and nothing changes", async () => {
  // A person who may approve, who leaves after the page counted them.
  const leaving = newAddress();
  assert.equal((await api('POST', '/users', ADMIN_KEY, { address: leaving, role: 'approver' })).status, 201);
  const people = (await api('GET', '/users', ADMIN_KEY)).body.users.filter((u) => u.role !== 'viewer').length;
  const p = await page(owner);
  let reading = 0; // the page's reads of the people in flight
  const isUsers = (r) => r.method() === 'GET' && new URL(r.url()).pathname.endsWith('/users');
  p.on('request', (r) => isUsers(r) && reading++);
  for (const done of ['requestfinished', 'requestfailed']) p.on(done, (r) => isUsers(r) && reading--);
  await signIn(p);
  const policy = await openPolicy(p);
  await policy.getByText(`people who must approve a parked payment (1 to ${people})`).waitFor();
  // The page reads the people again once its event stream connects; they
  // leave only after that read, so the page still counts them when it saves.
  await p
    .getByTestId('stream')
    .filter({ hasText: /^Live$/ })
    .waitFor({ timeout: 10000 });
  for (let quiet = 0; quiet < 3;) {
    await p.waitForTimeout(100);
    quiet = reading === 0 ? quiet + 1 : 0;
  }
  assert.equal((await api('DELETE', `/users/${leaving}`, ADMIN_KEY)).status, 204);
  await policy.getByLabel('Approvals needed').fill(String(people));
  await policy.getByRole('button', { name: 'Save policy' }).click();
  const alert = p.getByRole('alert').filter({ hasText: 'Not saved:' });
  await alert.waitFor();
  assert.match(await alert.textContent(), /approvals_required/);
  assert.equal((await api('GET', `/agents/${wallet}`, ADMIN_KEY)).body.policy.approvals_required, 2);
  // What was typed stays, to correct.
  assert.equal(await policy.getByLabel('Approvals needed').inputValue(), String(people));
  await p.context().close();
});

test('on a 375 px phone, light and dark: the rules fit, pass axe, and a viewer only reads them', async () => {
  assert.equal((await api('PATCH', `/agents/${wallet}/policy`, ADMIN_KEY, { active_hours: HOURS, monthly_limit_usdc: 900 })).status, 200);
  const p = await signedIn(owner, { width: 375, height: 800 });
  const policy = await openPolicy(p);
  await policy.getByRole('checkbox', { name: 'Saturday' }).waitFor();
  assert.equal(await policy.getByRole('combobox', { name: 'Time zone' }).inputValue(), HOURS.timezone);
  for (const scheme of ['light', 'dark']) {
    await p.emulateMedia({ colorScheme: scheme });
    assert.ok((await sideways(p)) <= 0, `the editor scrolls sideways by ${await sideways(p)} px (${scheme})`);
    await accessible(p, `the policy editor at 375 px, ${scheme}`);
    await policy.screenshot({ path: `${SHOTS}policy-rules-phone${scheme === 'dark' ? '-dark' : ''}.png` });
  }
  await p.context().close();

  const v = await signedIn(viewer, { width: 375, height: 800, colorScheme: 'dark' });
  await v.goto(`${BASE}/dashboard/wallets/${wallet}`);
  const read = v.getByRole('region', { name: 'Policy', exact: true });
  await read.locator('dd[data-field="approvals_required"]').waitFor();
  assert.equal(await text(read.locator('dd[data-field="approvals_required"]')), '2 people');
  assert.equal(await text(read.locator('dd[data-field="monthly_limit_usdc"]')), '900.00 USDC');
  assert.equal(await text(read.locator('dd[data-field="active_hours"]')), 'Mon–Thu, Sat 08:30–20:00 (America/New_York)');
  assert.equal(await text(read.locator('dd[data-field="outside_active_hours"]')), 'parked for approval');
  assert.equal(await read.locator('input, select, button').count(), 0);
  assert.ok((await sideways(v)) <= 0);
  await accessible(v, 'the policy read by a viewer at 375 px, dark');
  await v.context().close();
});

test('an owner links a person to their Slack member id on the users page, and unlinks them', async () => {
  const person = addressOf(approver);
  const member = `U${Date.now().toString(36).toUpperCase()}`;
  const slackOf = async () => (await api('GET', '/users', ADMIN_KEY)).body.users.find((u) => u.address === person).slack_user_id;
  assert.equal(await slackOf(), null);
  const p = await signedIn(owner);
  await p.getByRole('link', { name: 'Users', exact: true }).click();
  const form = p.getByRole('form', { name: `Slack member of ${person}` });
  const input = form.getByRole('textbox', { name: `Slack member id of ${person}` });
  await input.fill(member.toLowerCase());
  await form.getByText('A Slack member id: U or W').waitFor();
  assert.ok(await form.getByRole('button', { name: 'Link', exact: true }).isDisabled());
  await input.fill(member);
  await form.getByRole('button', { name: 'Link', exact: true }).click();
  await form.getByRole('button', { name: 'Unlink' }).waitFor();
  assert.equal(await slackOf(), member);
  assert.equal(await p.locator(`tr[data-address="${person}"] [data-slack]`).getAttribute('data-slack'), member);
  await p.screenshot({ path: `${SHOTS}users-slack.png`, fullPage: true });
  // Another person may not have the same member: the service says so.
  const mine = p.getByRole('form', { name: `Slack member of ${addressOf(owner)}` });
  await mine.getByRole('textbox').fill(member);
  await mine.getByRole('button', { name: 'Link', exact: true }).click();
  await p.getByRole('alert').waitFor();
  assert.equal((await api('GET', '/users', ADMIN_KEY)).body.users.find((u) => u.address === addressOf(owner)).slack_user_id, null);
  await mine.getByRole('textbox').fill('');

  await form.getByRole('button', { name: 'Unlink' }).click();
  await form.getByRole('button', { name: 'Link', exact: true }).waitFor();
  assert.equal(await slackOf(), null);
  assert.equal(await input.inputValue(), '');
  await p.context().close();
});

test('an owner creates a wallet with the rules on the new-wallet form; too many approvals are caught beside the field; the API has what was saved', async () => {
  const label = `rules-new-${Date.now().toString(36)}`;
  const hours = { timezone: 'Europe/Paris', days: ['tue', 'wed', 'sun'], from: '22:00', to: '06:00' };
  const people = (await api('GET', '/users', ADMIN_KEY)).body.users.filter((u) => u.role !== 'viewer').length;
  const before = (await api('GET', `/agents?limit=50&q=${label}`, ADMIN_KEY)).body.agents.length;
  assert.equal(before, 0);

  const p = await signedIn(owner, { height: 2000 });
  await p.getByRole('link', { name: 'Wallets', exact: true }).click();
  await p.getByRole('button', { name: 'New wallet…' }).click();
  const form = p.getByRole('form', { name: 'Create a wallet' });
  await form.getByLabel('Label', { exact: true }).fill(label);
  await form.getByText(`people who must approve a parked payment (1 to ${people})`).waitFor();
  await form.getByLabel('Approvals needed').fill(String(people + 1));
  await form.getByLabel('Monthly limit').fill('30.5');
  await form.getByLabel('Payments per day').fill('4');
  await form.getByRole('button', { name: 'Set active hours' }).click();
  await form.getByRole('combobox', { name: 'Time zone' }).fill(hours.timezone);
  await form.getByLabel('Opens at').fill(hours.from);
  await form.getByLabel('Closes at').fill(hours.to);
  await form.getByText('The next morning (overnight).').waitFor();
  for (const [day, name] of Object.entries({
    mon: 'Monday',
    tue: 'Tuesday',
    wed: 'Wednesday',
    thu: 'Thursday',
    fri: 'Friday',
    sat: 'Saturday',
    sun: 'Sunday',
  })) {
    await form.getByRole('checkbox', { name })[hours.days.includes(day) ? 'check' : 'uncheck']();
  }

  // More approvals than the account has people who may approve: the
  // form says so beside the field, as the editor does, and will not send.
  await form.getByText(`At most ${people}: the account's owners and approvers.`).waitFor();
  assert.ok(await form.getByRole('button', { name: 'Create wallet' }).isDisabled(), 'Create is enabled with too many approvals');
  await p.screenshot({ path: `${SHOTS}wallet-new-rules.png`, fullPage: true });

  await form.getByLabel('Approvals needed').fill('2');
  await form.getByRole('button', { name: 'Create wallet' }).click();
  await p.waitForURL(/\/dashboard\/wallets\/[0-9a-f-]{36}$/);
  const id = p.url().split('/').pop();
  const { status, body } = await api('GET', `/agents/${id}`, ADMIN_KEY);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.label, label);
  const { approvals_required, weekly_limit_usdc, monthly_limit_usdc, max_tx_per_hour, max_tx_per_day, active_hours, outside_active_hours } =
    body.policy;
  assert.deepEqual(
    { approvals_required, weekly_limit_usdc, monthly_limit_usdc, max_tx_per_hour, max_tx_per_day, active_hours, outside_active_hours },
    {
      approvals_required: 2,
      weekly_limit_usdc: null,
      monthly_limit_usdc: 30.5,
      max_tx_per_hour: null,
      max_tx_per_day: 4,
      active_hours: hours,
      outside_active_hours: 'block',
    },
  );
  // The wallet's page opens its editor on what was saved.
  const policy = p.getByRole('region', { name: 'Policy', exact: true });
  await policy.getByRole('button', { name: 'Save policy' }).waitFor();
  assert.deepEqual(
    await Promise.all(
      ['Approvals needed', 'Monthly limit', 'Payments per day', 'Opens at', 'Closes at'].map((l) => policy.getByLabel(l).inputValue()),
    ),
    ['2', '30.5', '4', hours.from, hours.to],
  );
  assert.equal(await policy.getByRole('combobox', { name: 'Time zone' }).inputValue(), hours.timezone);
  assert.ok(await policy.getByRole('checkbox', { name: 'Sunday' }).isChecked());
  assert.ok(!(await policy.getByRole('checkbox', { name: 'Monday' }).isChecked()));
  await p.context().close();
});

test('no console errors on these pages', () => {
  // Besides the refusals lib.mjs allows, the 422 this file provokes on purpose.
  assert.deepEqual(
    consoleErrors.filter((e) => !/status of 4(0[139]|22)/.test(e)),
    [],
  );
});
