// The policy editor as an owner uses it: typing amounts and addresses, the
// messages beside each field, the list of changes, what Save sends to the
// API, and trying a send. The API is a recorded fetch that answers as the
// real one does; the browser tests (test/wallets.test.mjs) run the same
// page against the real API.
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import bs58 from 'bs58';
import { useState } from 'react';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { type Agent, setCSRF } from './api';
import type { Policy, PolicyInput, Preview } from './api-wallets';
import { PolicyEditor } from './PolicyEditor';
import { NO_RULES } from './policy-draft';

const WALLET = '5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21';
const FRIEND = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const OTHER = bs58.encode(new Uint8Array(32).fill(7));

function agentWith(p: Partial<Policy> = {}): Agent {
  return {
    id: WALLET,
    kind: 'agent',
    label: 'research-bot',
    pubkey: bs58.encode(new Uint8Array(32).fill(3)),
    state: 'active',
    created_at: '2026-04-01T12:00:00Z',
    policy: { daily_limit_usdc: 100, max_tx_usdc: 20, approval_threshold_usdc: 10, allowlist: [], allowlist_labels: {}, ...NO_RULES, ...p },
  };
}

type Request = { method: string; path: string; body: unknown; csrf: string | undefined };
type Answer = { status: number; body?: unknown };

/** api records the page's requests and answers each with answer (which may wait). */
function api(answer: (r: Request) => Answer | Promise<Answer>) {
  const requests: Request[] = [];
  vi.stubGlobal('fetch', async (path: string, init: RequestInit) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    const r = { method: init.method ?? 'GET', path, body: init.body ? JSON.parse(init.body as string) : undefined, csrf: headers['X-CSRF-Token'] };
    requests.push(r);
    const a = await answer(r);
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), { status: a.status, headers: { 'Content-Type': 'application/json' } });
  });
  return requests;
}

/** saved answers a PATCH of the policy as the API does: the wallet with the patch applied. */
const saved =
  (a: Agent) =>
  (r: Request): Answer => ({ status: 200, body: { ...a, policy: { ...a.policy, ...(r.body as PolicyInput) } } });

function preview(outcome: Preview['outcome'], reason: Preview['reason'] = null): Preview {
  return {
    outcome,
    reason,
    rule: null,
    spent_today_usdc: 12.5,
    remaining_today_usdc: 87.5,
    daily_limit_usdc: 100,
    max_tx_usdc: 20,
    approval_threshold_usdc: 10,
    ...NO_RULES,
    spent_week_usdc: 12.5,
    remaining_week_usdc: null,
    spent_month_usdc: 12.5,
    remaining_month_usdc: null,
    payments_last_hour: 1,
    payments_last_day: 1,
    within_active_hours: null,
  };
}

/** Page holds the wallet as the wallet page does: a saved one replaces it. */
function Page({ agent, onSaved }: { agent: Agent; onSaved: (a: Agent) => void }) {
  const [shown, setShown] = useState(agent);
  const [seen, setSeen] = useState(agent);
  if (agent !== seen) {
    setSeen(agent);
    setShown(agent);
  }
  return (
    <PolicyEditor
      agent={shown}
      onSaved={(a) => {
        onSaved(a);
        setShown(a);
      }}
    />
  );
}

function setup(agent = agentWith()) {
  const onSaved = vi.fn();
  const view = render(<Page agent={agent} onSaved={onSaved} />);
  const user = userEvent.setup();
  const form = screen.getByRole('form', { name: 'Edit the policy' });
  const changes = screen.getByRole('region', { name: 'Changes' });
  const save = screen.getByRole('button', { name: 'Save policy' }) as HTMLButtonElement;
  const discard = screen.getByRole('button', { name: 'Discard changes' }) as HTMLButtonElement;
  const field = (name: string) => within(form).getByRole('textbox', { name }) as HTMLInputElement;
  /** retype replaces what a field holds with text, as a person selecting it and typing would. */
  const retype = async (input: HTMLElement, text: string) => {
    await user.clear(input);
    if (text) await user.type(input, text);
  };
  return { ...view, onSaved, user, form, changes, save, discard, field, retype };
}

beforeEach(() => {
  setCSRF('csrf-token');
});

test('shows the current policy with nothing to save', () => {
  const requests = api(() => ({ status: 500 }));
  const { field, changes, save, discard } = setup();
  expect(field('Daily limit').value).toBe('100');
  expect(field('Max per send').value).toBe('20');
  expect(field('Approval from').value).toBe('10');
  expect(screen.getByRole('textbox', { name: 'Daily limit', description: 'USDC a UTC day may send in all' })).toBeTruthy();
  expect(screen.getByText('Empty: the wallet may pay any address.')).toBeTruthy();
  expect(within(changes).getByText('No changes.')).toBeTruthy();
  expect(save.disabled).toBe(true);
  expect(discard.disabled).toBe(true);
  expect(requests).toEqual([]);
});

describe('an amount is checked as it is typed', () => {
  test.each([
    ['', 'Enter an amount.'],
    ['abc', 'A number of USDC, like 25 or 2.5.'],
    ['12.', 'A number of USDC, like 25 or 2.5.'],
    ['-5', 'A number of USDC, like 25 or 2.5.'],
    ['1.1234567', 'At most 6 decimals.'],
    ['1234567890123456', 'Too many digits.'],
    ['2000000000000', 'Too large.'],
  ])('%j: %s', async (typed, message) => {
    api(() => ({ status: 500 }));
    const { field, retype, changes, save } = setup();
    await retype(field('Max per send'), typed);
    const input = screen.getByRole('textbox', { name: 'Max per send', description: message });
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(within(changes).getByText('Fix the errors above to see the changes and save.')).toBeTruthy();
    expect(save.disabled).toBe(true);
    expect(screen.getByText("Fix the policy's errors to try a send.")).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Try it' }) as HTMLButtonElement).disabled).toBe(true);
  });

  test('a half-typed amount is kept and accepted once complete', async () => {
    api(() => ({ status: 500 }));
    const { field, retype, user, changes, save } = setup();
    await retype(field('Max per send'), '7.');
    expect(field('Max per send').getAttribute('aria-invalid')).toBe('true');
    await user.type(field('Max per send'), '5');
    expect(field('Max per send').value).toBe('7.5');
    expect(field('Max per send').getAttribute('aria-invalid')).toBe('false');
    expect(screen.getByRole('textbox', { name: 'Max per send', description: 'USDC one send may move' })).toBeTruthy();
    expect(within(changes).getByRole('listitem').textContent).toBe('Max per send: 20.00 USDC → 7.50 USDC');
    expect(save.disabled).toBe(false);
  });
});

test('Save sends only the amounts that changed, then shows the saved policy', async () => {
  const agent = agentWith();
  const requests = api(saved(agent));
  const { field, retype, changes, save, onSaved } = setup(agent);
  await retype(field('Daily limit'), '50');
  await retype(field('Approval from'), '0');
  expect(
    within(changes)
      .getAllByRole('listitem')
      .map((li) => li.textContent),
  ).toEqual(['Daily limit: 100.00 USDC → 50.00 USDC', 'Approval from: 10.00 USDC → 0.00 USDC']);

  await userEvent.click(save);

  expect(requests).toEqual([
    {
      method: 'PATCH',
      path: `/api/public/v1/agents/${WALLET}/policy`,
      body: { daily_limit_usdc: 50, approval_threshold_usdc: 0 },
      csrf: 'csrf-token',
    },
  ]);
  expect(onSaved).toHaveBeenCalledOnce();
  expect(onSaved.mock.calls[0][0].policy).toEqual({
    daily_limit_usdc: 50,
    max_tx_usdc: 20,
    approval_threshold_usdc: 0,
    allowlist: [],
    allowlist_labels: {},
    ...NO_RULES,
  });
  expect(within(changes).getByText('Saved.')).toBeTruthy();
  expect(field('Daily limit').value).toBe('50');
  expect(save.disabled).toBe(true);
});

test('the address book checks each address, flags a repeat, and saves the allowlist with its labels', async () => {
  const agent = agentWith();
  const requests = api(saved(agent));
  const { form, field, retype, user, changes, save } = setup(agent);
  const book = within(form).getByRole('group', { name: 'Allowlist' });

  await user.click(within(book).getByRole('button', { name: 'Add address' }));
  const address1 = field('Address 1');
  await retype(address1, `${FRIEND.slice(0, 10)}0OIl`);
  expect(screen.getByRole('textbox', { name: 'Address 1', description: '“0” is not a base58 character (no 0, O, I or l).' })).toBeTruthy();
  expect(address1.getAttribute('aria-invalid')).toBe('true');
  await retype(address1, FRIEND.slice(0, 20));
  expect(screen.getByRole('textbox', { name: 'Address 1', description: 'Decodes to 15 bytes; a Solana address has 32.' })).toBeTruthy();
  expect(save.disabled).toBe(true);
  await retype(address1, FRIEND);
  expect(screen.getByRole('textbox', { name: 'Address 1', description: 'Valid address.' })).toBeTruthy();
  await user.type(field('Label 1 (optional)'), 'Supplier A');
  expect(screen.getByText('The wallet may pay only these addresses.')).toBeTruthy();

  await user.click(within(book).getByRole('button', { name: 'Add address' }));
  await user.type(field('Address 2'), FRIEND);
  expect(screen.getByRole('textbox', { name: 'Address 2', description: 'Already in the list (row 1).' })).toBeTruthy();
  expect(save.disabled).toBe(true);
  await user.click(within(book).getByRole('button', { name: 'Remove address 2' }));
  expect(within(book).queryByRole('textbox', { name: 'Address 2' })).toBeNull();
  expect(save.disabled).toBe(false);
  expect(within(changes).getByRole('listitem').textContent).toBe(`Allowlist: added ${FRIEND} (Supplier A)`);

  await user.click(save);
  expect(requests.map((r) => [r.method, r.body])).toEqual([['PATCH', { allowlist: [FRIEND], allowlist_labels: { [FRIEND]: 'Supplier A' } }]]);
});

test('removing and relabelling addresses lists each change and sends the labels whole', async () => {
  const agent = agentWith({ allowlist: [FRIEND, OTHER], allowlist_labels: { [FRIEND]: 'Acme', [OTHER]: 'Old' } });
  const requests = api(saved(agent));
  const { field, retype, user, changes, save } = setup(agent);
  expect(field('Address 1').value).toBe(FRIEND);
  expect(field('Label 2 (optional)').value).toBe('Old');

  await retype(field('Label 1 (optional)'), 'Acme Ltd');
  expect(within(changes).getByRole('listitem').textContent).toBe('Allowlist: 9WzD…AWWM relabelled Acme → Acme Ltd');
  await user.click(screen.getByRole('button', { name: 'Remove address 2' }));
  expect(
    within(changes)
      .getAllByRole('listitem')
      .map((li) => li.textContent),
  ).toEqual(['Allowlist: 9WzD…AWWM relabelled Acme → Acme Ltd', `Allowlist: removed ${OTHER} (Old)`]);

  await user.click(save);
  expect(requests.map((r) => r.body)).toEqual([{ allowlist: [FRIEND], allowlist_labels: { [FRIEND]: 'Acme Ltd' } }]);
});

test('a refused save says why and keeps what was typed', async () => {
  const requests = api(() => ({ status: 403, body: { error: 'viewers may not change a policy' } }));
  const { field, retype, user, save, onSaved } = setup();
  await retype(field('Max per send'), '30');
  await user.click(save);
  expect(screen.getByRole('alert').textContent).toBe('Not saved: viewers may not change a policy');
  expect(requests).toHaveLength(1);
  expect(onSaved).not.toHaveBeenCalled();
  expect(field('Max per send').value).toBe('30');
  expect(save.disabled).toBe(false);
});

test('Discard changes puts the current policy back', async () => {
  const requests = api(() => ({ status: 500 }));
  const { field, retype, user, changes, discard, save } = setup();
  await retype(field('Daily limit'), 'lots');
  expect(discard.disabled).toBe(false);
  await user.click(discard);
  expect(field('Daily limit').value).toBe('100');
  expect(within(changes).getByText('No changes.')).toBeTruthy();
  expect(save.disabled).toBe(true);
  expect(requests).toEqual([]);
});

test('a policy saved by someone else: an untouched draft follows it, an edited one stays and is compared with it', async () => {
  api(() => ({ status: 500 }));
  const { field, retype, changes, rerender, onSaved } = setup();
  rerender(<Page agent={agentWith({ daily_limit_usdc: 80 })} onSaved={onSaved} />);
  expect(field('Daily limit').value).toBe('80');
  expect(within(changes).getByText('No changes.')).toBeTruthy();
  expect(within(changes).queryByRole('status')).toBeNull();

  await retype(field('Max per send'), '5');
  rerender(<Page agent={agentWith({ daily_limit_usdc: 80, max_tx_usdc: 15 })} onSaved={onSaved} />);
  expect(field('Max per send').value).toBe('5');
  expect(within(changes).getByRole('status').textContent).toMatch(/changed by someone else/);
  expect(within(changes).getByRole('listitem').textContent).toBe('Max per send: 15.00 USDC → 5.00 USDC');
});

describe('Try a send', () => {
  const fill = async (s: ReturnType<typeof setup>, to: string, amount: string) => {
    const tryIt = screen.getByRole('form', { name: 'Try a send' });
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'To' }), to);
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'Amount' }), amount);
    return tryIt;
  };

  test('checks its fields and previews under the current policy when nothing changed', async () => {
    const requests = api(() => ({ status: 200, body: preview('sent') }));
    const s = setup();
    const tryIt = screen.getByRole('form', { name: 'Try a send' });
    const button = within(tryIt).getByRole('button', { name: 'Try it' }) as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    await fill(s, 'not-an-address', '0');
    expect(within(tryIt).getByRole('textbox', { name: 'To', description: '“-” is not a base58 character (no 0, O, I or l).' })).toBeTruthy();
    expect(within(tryIt).getByRole('textbox', { name: 'Amount', description: 'More than 0.' })).toBeTruthy();
    expect(button.disabled).toBe(true);

    await s.retype(within(tryIt).getByRole('textbox', { name: 'To' }), OTHER);
    await s.retype(within(tryIt).getByRole('textbox', { name: 'Amount' }), '5');
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'Memo (optional)' }), 'dry run');
    await s.user.click(button);

    expect(requests).toEqual([
      {
        method: 'POST',
        path: `/api/public/v1/agents/${WALLET}/send/preview`,
        body: {
          to: OTHER,
          amount: 5,
          memo: 'dry run',
          policy: { daily_limit_usdc: 100, max_tx_usdc: 20, approval_threshold_usdc: 10, allowlist: [], outside_active_hours: 'block' },
        },
        csrf: 'csrf-token',
      },
    ]);
    const result = within(tryIt).getByRole('status');
    expect(result.textContent).toMatch(/^Under the current policy: sent/);
    expect(within(result).getByTestId('preview-remaining').textContent).toBe('87.50 USDC');
    expect(within(result).queryByTestId('preview-current')).toBeNull();
  });

  test('with changes, compares the proposed policy with the current one, and saves nothing', async () => {
    const requests = api((r) => {
      const proposed = (r.body as { policy?: PolicyInput }).policy;
      return { status: 200, body: proposed ? preview('blocked', 'exceeds_max_tx') : preview('pending_approval') };
    });
    const s = setup();
    await s.retype(s.field('Max per send'), '8');
    const tryIt = await fill(s, OTHER, '12');
    expect(within(tryIt).getByText(/under the proposed policy/)).toBeTruthy();
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));

    expect(requests.map((r) => [r.method, r.body])).toEqual([
      [
        'POST',
        {
          to: OTHER,
          amount: 12,
          policy: { daily_limit_usdc: 100, max_tx_usdc: 8, approval_threshold_usdc: 10, allowlist: [], outside_active_hours: 'block' },
        },
      ],
      ['POST', { to: OTHER, amount: 12 }],
    ]);
    const proposed = within(tryIt).getByTestId('preview-outcome');
    expect(proposed.querySelector('[data-outcome]')?.textContent).toBe('blocked');
    expect(proposed.querySelector('[data-reason]')?.textContent).toBe('exceeds_max_tx');
    expect(within(tryIt).getByTestId('preview-current').textContent).toBe('pending approval');
    expect(s.onSaved).not.toHaveBeenCalled();
  });

  test('an answer about an older draft is not shown', async () => {
    let answer: (a: Answer) => void = () => {};
    api(() => new Promise<Answer>((resolve) => (answer = resolve)));
    const s = setup();
    const tryIt = await fill(s, OTHER, '12');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));
    expect(within(tryIt).getByRole('button', { name: 'Trying…' })).toBeTruthy();

    await s.retype(s.field('Daily limit'), '90');
    answer({ status: 200, body: preview('sent') });
    expect(await within(tryIt).findByRole('button', { name: 'Try it' })).toBeTruthy();
    expect(within(tryIt).queryByRole('status')).toBeNull();
  });

  test('a failed preview says why', async () => {
    api(() => ({ status: 429, body: { error: 'too many requests' } }));
    const s = setup();
    const tryIt = await fill(s, OTHER, '1');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));
    expect(within(tryIt).getByRole('alert').textContent).toBe('too many requests');
  });
});
