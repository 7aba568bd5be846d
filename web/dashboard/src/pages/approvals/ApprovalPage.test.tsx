// The approval page in each of its states, as a person deciding sees it:
// pending (to decide, or only to read), approved and sent, rejected,
// expired, an x402 purchase, an MPP charge with splits, a decision the
// API refuses, and the decision made with the keyboard alone. The API is
// a recorded fetch that answers as the real one does; the browser tests
// (test/dashboard.test.mjs, test/x402.test.mjs) run the same page
// against the real API and chain.
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, test } from 'vitest';
import { setCSRF } from '../../services/api';
// The fixtures are what the API sends; the page maps them.
import type { ApprovalFromAPI as Approval, ApprovalContextFromAPI as ApprovalContext } from '../../services/approvals';
import { type Role, type Session, toSession } from '../../services/session';
import { type Answer, type Request, recordedFetch, renderRoute } from '../../test-render';
import { ApprovalPage } from './ApprovalPage';

const ID = 'ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5';
const WALLET = '5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21';
const TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ME = 'BPFLoaderUpgradeab1e11111111111111111111111';
const OTHER_PERSON = 'Vote111111111111111111111111111111111111111';
const SIGNATURE = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';
const PATH = `/api/public/v1/approvals/${ID}`;

function session(role: Role = 'owner', address = ME): Session {
  return toSession({ address, account_id: 'acc-1', role, network: 'devnet', csrf_token: 'csrf-token', accounts: [], local_chain: true });
}

/** pending is an approval waiting for a person: 25 USDC to TO, asked by an agent's key, expiring in two hours. */
function pending(a: Partial<Approval> = {}): Approval {
  return {
    id: ID,
    wallet_id: WALLET,
    agent_label: 'research-bot',
    kind: 'send',
    amount: 25,
    asset: 'USDC',
    to: TO,
    memo: 'invoice 2026-114',
    status: 'pending',
    requested_by: 'key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
    created_at: '2026-04-01T12:00:00Z',
    expires_at: new Date(Date.now() + 2 * 3600_000 + 30_000).toISOString(),
    decided_at: null,
    approved_by: null,
    approvals: [],
    approvals_needed: 1,
    rejected_by: null,
    note: null,
    reason: null,
    reason_detail: null,
    signature: null,
    transaction_status: null,
    resource: null,
    description: null,
    realm: null,
    splits: [],
    ...a,
  };
}

function context(c: Partial<ApprovalContext> = {}): ApprovalContext {
  return {
    wallet: {
      id: WALLET,
      kind: 'agent',
      signer: 'local',
      label: 'research-bot',
      pubkey: 'Hk7uVkqN9qRcyM5KgEf4sHo2n1hZDEYYx3mM1wbW6Kx',
      state: 'active',
      created_at: '2026-03-01T09:00:00Z',
    },
    recipient: { address: TO, allowlist_empty: false, on_allowlist: true, label: 'Data vendor (invoices)', first_payment: true },
    if_approved_now: {
      outcome: 'sent',
      reason: null,
      remaining_today_usdc: 90,
      remaining_today_after_usdc: 65,
      remaining_today_eur: null,
      remaining_today_after_eur: null,
    },
    requester: { id: 'key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', label: 'agents runtime', prefix: 'svc_test_4vJ9JU' },
    webhook: { deliveries: [], event: null },
    ...c,
  };
}

/**
 * theAPI answers as the API does for one approval: its reads, and approve
 * and reject, which decide answers (by default: approved and sent, or
 * rejected). A decided approval reads as decided afterwards.
 */
function theAPI(approval: Approval, ctx: ApprovalContext = context(), decide?: (r: Request) => Answer | Promise<Answer>) {
  let current = approval;
  return recordedFetch(async (r) => {
    if (r.method === 'GET' && r.path === PATH) return { status: 200, body: current };
    if (r.method === 'GET' && r.path === `${PATH}/context`) return { status: 200, body: ctx };
    const kind = r.method === 'POST' && r.path.startsWith(`${PATH}/`) ? r.path.slice(PATH.length + 1) : '';
    if (kind !== 'approve' && kind !== 'reject') return { status: 404, body: { error: 'not found' } };
    const note = (r.body as { note?: string }).note ?? null;
    const a = decide
      ? await decide(r)
      : {
          status: 200,
          body:
            kind === 'approve'
              ? {
                  ...current,
                  status: 'sent',
                  approved_by: `user:${ME}`,
                  decided_at: '2026-04-01T12:05:00Z',
                  note,
                  signature: SIGNATURE,
                  transaction_status: 'pending',
                }
              : { ...current, status: 'rejected', rejected_by: `user:${ME}`, decided_at: '2026-04-01T12:05:00Z', note },
        };
    if (a.status < 300) current = a.body as Approval;
    return a;
  });
}

const show = (s: Session = session()) => renderRoute(`/approvals/${ID}`, <ApprovalPage id={ID} session={s} />);
const decisions = (requests: Request[]) => requests.filter((r) => r.method === 'POST').map((r) => [r.path.slice(PATH.length + 1), r.body, r.csrf]);
/** field is what the page says beside a term (its <dt>). */
/** heading is the page's title once the approval shows: the amount, then to whom. */
const heading = async () => [...(await screen.findByRole('heading', { level: 1, name: /USDC/ })).children].map((c) => c.textContent).join(' ');
const field = (term: string) => screen.getByText(term, { selector: 'dt' }).nextElementSibling?.textContent;

beforeEach(() => {
  setCSRF('csrf-token');
});

describe('pending', () => {
  test('amount and recipient first, the facts about them, what approving does, and the two decisions', async () => {
    const requests = theAPI(pending());
    show();
    expect(await heading()).toBe('25.00 USDC to 9WzD…AWWM');
    expect(screen.getByTestId('status').textContent).toBe('pending');
    expect(field('Amount')).toBe('25.00 USDC');
    expect(screen.getByRole('region', { name: 'Payment' }).textContent).toContain(TO);
    expect(screen.getByText('First payment to this address')).toBeTruthy();
    expect(screen.getByText('On the allowlist as “Data vendor (invoices)”')).toBeTruthy();
    expect(field('Wallet')).toContain('research-bot');
    expect(field('Memo')).toBe('invoice 2026-114');
    expect(field('Asked by')).toBe('agents runtime');
    expect(field('Expires')).toMatch(/^in 2 h 0 min \(\d+ \w+ \d{4}, \d\d:\d\d UTC\)$/);
    const now = screen.getByRole('region', { name: 'What approving does now' });
    expect(now.textContent).toContain("The policy allows it: it would be sent, leaving 65.00 USDC of today's limit.");
    const decide = screen.getByRole('region', { name: 'Decide' });
    expect(within(decide).getByRole('textbox', { name: 'Note (optional)' })).toBeTruthy();
    expect(within(decide).getByRole('button', { name: 'Approve…' })).toBeTruthy();
    expect(within(decide).getByRole('button', { name: 'Reject' })).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(decisions(requests)).toEqual([]);
    expect(screen.getByText('No endpoint was subscribed to approval.pending.')).toBeTruthy();
  });

  test('a recipient off the allowlist, and a policy that would block it now, are said before deciding', async () => {
    theAPI(
      pending(),
      context({
        recipient: { address: TO, allowlist_empty: false, on_allowlist: false, label: null, first_payment: false },
        if_approved_now: {
          outcome: 'blocked',
          reason: 'exceeds_daily_limit',
          remaining_today_usdc: 10,
          remaining_today_after_usdc: 0,
          remaining_today_eur: null,
          remaining_today_after_eur: null,
        },
      }),
    );
    show();
    expect(await screen.findByText('Not on the allowlist')).toBeTruthy();
    expect(screen.queryByText('First payment to this address')).toBeNull();
    expect(screen.getByRole('region', { name: 'What approving does now' }).textContent).toContain(
      'The policy blocks it now (exceeds_daily_limit): approving would reject it.',
    );
  });

  test('a payment in a EUR stablecoin: its amount in EURC, what approving leaves of the EUR day', async () => {
    theAPI(
      pending({ amount: 12, asset: 'EURC' }),
      context({
        if_approved_now: {
          outcome: 'sent',
          reason: null,
          remaining_today_usdc: 90,
          remaining_today_after_usdc: 90,
          remaining_today_eur: 30,
          remaining_today_after_eur: 18,
        },
      }),
    );
    show();
    const h = await screen.findByRole('heading', { level: 1, name: /EURC/ });
    expect([...h.children].map((c) => c.textContent).join(' ')).toBe('12.00 EURC to 9WzD…AWWM');
    expect(field('Amount')).toBe('12.00 EURC');
    expect(screen.getByRole('region', { name: 'What approving does now' }).textContent).toContain(
      "The policy allows it: it would be sent, leaving 18.00 EUR of today's EUR limit.",
    );
  });

  test('a viewer reads it but is offered no decision', async () => {
    theAPI(pending());
    show(session('viewer'));
    expect(await screen.findByText('Your role (viewer) can read approvals but not decide them.')).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'Decide' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Reject' })).toBeNull();
  });

  test('the person who asked for it sees who asked; approving it is refused by the API and the page says why', async () => {
    const refusal =
      'Requester cannot approve: you asked for this payment, or an admin key you made did; another person, or an admin key you did not make, must approve it';
    const requests = theAPI(pending({ requested_by: `user:${ME}` }), context({ requester: { id: `user:${ME}`, label: null, prefix: null } }), () => ({
      status: 403,
      body: { error: refusal },
    }));
    show(session('approver'));
    const user = userEvent.setup();
    await heading();
    expect(field('Asked by')).toBe('user BPFL…1111');
    await user.click(screen.getByRole('button', { name: 'Approve…' }));
    await user.click(await screen.findByRole('button', { name: 'Confirm approval' }));
    expect((await screen.findByRole('alert')).textContent).toBe(refusal);
    expect(decisions(requests)).toEqual([['approve', {}, 'csrf-token']]);
    // Nothing changed: still pending, the decision still offered.
    expect(screen.getByTestId('status').textContent).toBe('pending');
    expect((screen.getByRole('button', { name: 'Confirm approval' }) as HTMLButtonElement).disabled).toBe(false);
  });
});

test('approving asks to confirm with the amount and the whole address, then shows the API’s answer: sent, with its signature', async () => {
  const requests = theAPI(pending());
  show();
  const user = userEvent.setup();
  await user.type(await screen.findByRole('textbox', { name: 'Note (optional)' }), 'planned spend');
  await user.click(screen.getByRole('button', { name: 'Approve…' }));
  const confirm = await screen.findByRole('alertdialog', { name: 'Confirm approval' });
  expect(confirm.textContent).toContain('Approve and send 25.00 USDC from research-bot to:');
  expect(confirm.textContent).toContain(TO);
  expect(decisions(requests)).toEqual([]);
  await user.click(within(confirm).getByRole('button', { name: 'Confirm approval' }));

  expect(await screen.findByText('sent', { selector: '[data-testid="status"]' })).toBeTruthy();
  expect(decisions(requests)).toEqual([['approve', { note: 'planned spend' }, 'csrf-token']]);
  expect(screen.getByText(/transaction pending/)).toBeTruthy();
  expect(screen.getByTestId('signature').textContent).toBe(SIGNATURE);
  expect(screen.getByRole('link', { name: 'View on the explorer' }).getAttribute('href')).toBe(
    `https://explorer.solana.com/tx/${SIGNATURE}?cluster=devnet`,
  );
  expect(field('Decided')).toContain('approved by user BPFL…1111');
  expect(field('Note')).toBe('planned spend');
  expect(screen.queryByRole('region', { name: 'Decide' })).toBeNull();
  expect(screen.queryByRole('region', { name: 'What approving does now' })).toBeNull();
  expect(screen.queryByRole('alert')).toBeNull();
});

test('Cancel leaves the approval pending and sends nothing', async () => {
  const requests = theAPI(pending());
  show();
  const user = userEvent.setup();
  await user.click(await screen.findByRole('button', { name: 'Approve…' }));
  await user.click(await screen.findByRole('button', { name: 'Cancel' }));
  expect(screen.queryByRole('alertdialog')).toBeNull();
  expect(screen.getByRole('button', { name: 'Approve…' })).toBeTruthy();
  expect(decisions(requests)).toEqual([]);
});

test('rejecting needs no confirmation and shows the rejection with its note', async () => {
  const requests = theAPI(pending());
  show();
  const user = userEvent.setup();
  await user.type(await screen.findByRole('textbox', { name: 'Note (optional)' }), 'duplicate request');
  await user.click(screen.getByRole('button', { name: 'Reject' }));
  expect(await screen.findByText('rejected', { selector: '[data-testid="status"]' })).toBeTruthy();
  expect(decisions(requests)).toEqual([['reject', { note: 'duplicate request' }, 'csrf-token']]);
  expect(field('Decided')).toContain('rejected by user BPFL…1111');
  expect(field('Note')).toBe('duplicate request');
  expect(screen.queryByRole('button', { name: 'Approve…' })).toBeNull();
});

describe('decided before the page opened', () => {
  test('approved and sent: who approved, when, the confirmed transaction and its link', async () => {
    theAPI(
      pending({
        status: 'sent',
        approved_by: `user:${OTHER_PERSON}`,
        decided_at: '2026-04-01T12:07:00Z',
        note: 'ok',
        signature: SIGNATURE,
        transaction_status: 'confirmed',
      }),
    );
    show();
    expect(await screen.findByText('sent', { selector: '[data-testid="status"]' })).toBeTruthy();
    expect(screen.getByText(/transaction confirmed/)).toBeTruthy();
    expect(field('Decided')).toMatch(/ ago · approved by user Vote…1111$/);
    expect(screen.getByTitle('1 Apr 2026, 12:07 UTC').tagName).toBe('TIME');
    expect(screen.getByTestId('signature').textContent).toBe(SIGNATURE);
    expect(screen.queryByRole('region', { name: 'Decide' })).toBeNull();
    expect(screen.queryByText('Expires')).toBeNull();
  });

  test('rejected by a person', async () => {
    theAPI(pending({ status: 'rejected', rejected_by: `user:${OTHER_PERSON}`, decided_at: '2026-04-01T12:07:00Z', note: 'not this month' }));
    show();
    expect(await screen.findByText('rejected', { selector: '[data-testid="status"]' })).toBeTruthy();
    expect(field('Decided')).toMatch(/ ago · rejected by user Vote…1111$/);
    expect(screen.getByTitle('1 Apr 2026, 12:07 UTC').tagName).toBe('TIME');
    expect(field('Note')).toBe('not this month');
    expect(screen.queryByTestId('reason')).toBeNull();
    expect(screen.queryByRole('region', { name: 'Decide' })).toBeNull();
  });

  test('approved, then rejected because the policy blocked it at approval: the reason is shown', async () => {
    theAPI(
      pending({
        status: 'rejected',
        approved_by: `user:${OTHER_PERSON}`,
        decided_at: '2026-04-01T12:07:00Z',
        reason: 'policy_violation_at_approval',
        reason_detail: 'exceeds_daily_limit',
      }),
    );
    show();
    expect((await screen.findByTestId('reason')).textContent).toBe('policy_violation_at_approval (exceeds_daily_limit)');
  });

  test('expired: nobody decided in time, nothing to decide', async () => {
    theAPI(pending({ status: 'expired', expires_at: '2026-04-02T12:00:00Z', decided_at: '2026-04-02T12:00:00Z' }));
    show();
    expect(await screen.findByText('expired', { selector: '[data-testid="status"]' })).toBeTruthy();
    expect(field('Decided')).toMatch(/ ago $/);
    expect(screen.getByTitle('2 Apr 2026, 12:00 UTC').tagName).toBe('TIME');
    expect(screen.queryByText('Expires')).toBeNull();
    expect(screen.queryByRole('region', { name: 'Decide' })).toBeNull();
    expect(screen.queryByRole('region', { name: 'What approving does now' })).toBeNull();
    expect(screen.queryByText(/can read approvals but not decide/)).toBeNull();
  });
});

test('an x402 purchase shows what it buys, whom it pays, how much, and what the seller says', async () => {
  const payTo = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';
  theAPI(
    pending({ kind: 'x402', amount: 0.01, to: payTo, memo: null, resource: 'https://seller.example/weather', description: 'Weather for one city' }),
    context({ recipient: { address: payTo, allowlist_empty: true, on_allowlist: false, label: null, first_payment: true } }),
  );
  show();
  expect(await heading()).toBe('0.01 USDC to 2wmV…dri9');
  expect(field('Buys (x402)')).toBe('https://seller.example/weather');
  expect(field('Seller says')).toBe('Weather for one city');
  expect(screen.getByRole('region', { name: 'Payment' }).textContent).toContain(payTo);
  expect(field('Amount')).toBe('0.01 USDC');
  expect(screen.getByText('The wallet has no allowlist (any recipient)')).toBeTruthy();
  expect(screen.getByRole('region', { name: 'What approving does now' }).textContent).toContain(
    'the agent could then buy it once (within 15 minutes, the policy checked again then), leaving 65.00 USDC',
  );
});

test('an MPP charge shows what it buys, the seller as it names itself, every recipient’s share, and confirms them all', async () => {
  const payTo = '2wmVCSfPxGPjrnMMn7rchp4uaeoTqN39mXFC2zhPdri9';
  const platform = 'Stake11111111111111111111111111111111111111';
  const referrer = 'Config1111111111111111111111111111111111111';
  const charge = pending({
    kind: 'mpp',
    amount: 0.5,
    to: payTo,
    memo: null,
    resource: 'https://seller.example/forecast',
    description: null,
    realm: 'seller.example',
    splits: [
      { to: platform, amount: 0.05 },
      { to: referrer, amount: 0.02 },
    ],
  });
  // Approving grants the purchase: sent, nothing signed yet.
  const requests = theAPI(
    charge,
    context({ recipient: { address: payTo, allowlist_empty: true, on_allowlist: false, label: null, first_payment: true } }),
    () => ({ status: 200, body: { ...charge, status: 'sent', approved_by: `user:${ME}`, decided_at: '2026-04-01T12:05:00Z' } }),
  );
  show();
  expect(await heading()).toBe('0.50 USDC to 2wmV…dri9 and 2 more');
  const payment = screen.getByRole('region', { name: 'Payment' });
  expect(payment.textContent).toContain('A purchase asked by research-bot');
  expect(
    within(within(payment).getByRole('list', { name: 'Split among 3 recipients' }))
      .getAllByRole('listitem')
      .map((li) => li.textContent),
  ).toEqual([`0.43 USDC to the recipient ${payTo}`, `0.05 USDC to ${platform}`, `0.02 USDC to ${referrer}`]);
  expect(field('Buys (MPP)')).toBe('https://seller.example/forecast');
  expect(field('Seller says it is')).toBe('seller.example');
  expect(field('Seller says')).toBe('—');
  expect(field('Amount')).toBe('0.50 USDC');
  expect(screen.getByRole('region', { name: 'What approving does now' }).textContent).toContain(
    'the agent could then buy it once (within 15 minutes, the policy checked again then), leaving 65.00 USDC',
  );

  const user = userEvent.setup();
  await user.click(screen.getByRole('button', { name: 'Approve…' }));
  const confirm = await screen.findByRole('alertdialog', { name: 'Confirm approval' });
  expect(confirm.textContent).toContain('Approve and send 0.50 USDC from research-bot split as follows:');
  expect(
    within(within(confirm).getByRole('list', { name: 'Split among 3 recipients' }))
      .getAllByRole('listitem')
      .map((li) => li.textContent),
  ).toEqual([`0.43 USDC to the recipient ${payTo}`, `0.05 USDC to ${platform}`, `0.02 USDC to ${referrer}`]);
  await user.click(within(confirm).getByRole('button', { name: 'Confirm approval' }));
  expect(await screen.findByText('sent', { selector: '[data-testid="status"]' })).toBeTruthy();
  expect(decisions(requests)).toEqual([['approve', {}, 'csrf-token']]);
  expect(screen.queryByTestId('signature')).toBeNull();
});

test('a decision that fails says why and can be tried again', async () => {
  let fail = true;
  const requests = theAPI(pending(), context(), () =>
    fail
      ? { status: 409, body: { error: 'approval is not pending' } }
      : { status: 200, body: pending({ status: 'rejected', rejected_by: `user:${ME}`, decided_at: '2026-04-01T12:05:00Z' }) },
  );
  show();
  const user = userEvent.setup();
  await user.click(await screen.findByRole('button', { name: 'Reject' }));
  expect((await screen.findByRole('alert')).textContent).toBe('approval is not pending');
  expect(screen.getByTestId('status').textContent).toBe('pending');

  fail = false;
  await user.click(screen.getByRole('button', { name: 'Reject' }));
  expect(await screen.findByText('rejected', { selector: '[data-testid="status"]' })).toBeTruthy();
  expect(screen.queryByRole('alert')).toBeNull();
  expect(decisions(requests)).toEqual([
    ['reject', {}, 'csrf-token'],
    ['reject', {}, 'csrf-token'],
  ]);
});

test('a page that cannot load says why', async () => {
  recordedFetch(() => ({ status: 404, body: { error: 'approval not found' } }));
  show();
  expect((await screen.findByText('approval not found')).className).toBe('error');
  expect(screen.queryByRole('heading', { level: 1 })).toBeNull();
});

test('keyboard only: Tab reaches Approve…, Enter opens the confirmation, Tab reaches Confirm approval, Enter approves', async () => {
  const requests = theAPI(pending());
  show();
  const user = userEvent.setup();
  await screen.findByRole('button', { name: 'Approve…' });
  /** tabTo presses Tab until the focus is on the button named name. */
  const tabTo = async (name: string) => {
    for (let i = 0; i < 20 && document.activeElement?.textContent !== name; i++) await user.tab();
    expect(document.activeElement?.textContent).toBe(name);
  };

  await tabTo('Approve…');
  await user.keyboard('{Enter}');
  expect(await screen.findByRole('alertdialog', { name: 'Confirm approval' })).toBeTruthy();
  expect(decisions(requests)).toEqual([]);
  await tabTo('Confirm approval');
  await user.keyboard('{Enter}');
  expect(await screen.findByText('sent', { selector: '[data-testid="status"]' })).toBeTruthy();
  expect(decisions(requests)).toEqual([['approve', {}, 'csrf-token']]);
});
