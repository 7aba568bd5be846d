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
import { setCSRF } from '../../../services/api';
import { policy } from '../../../test-fixtures';
import { type Answer, type Request, recordedFetch } from '../../../test-render';
// The fixtures are what the API sends; the editor reads the wallet's id and policy.
import type { Asset } from '../../../services/assets';
import type { Policy, PolicyInput, Preview, Wallet, WalletFromAPI as Agent } from '../../../services/wallets';
import { PolicyEditor } from './PolicyEditor';
import { PolicyView } from './PolicyView';
import { policySummary } from './policySummary';
import { NO_RULES } from './policy-draft';

const WALLET = '5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21';
const FRIEND = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const OTHER = bs58.encode(new Uint8Array(32).fill(7));

function agentWith(p: Partial<Policy> = {}): Agent {
  return {
    id: WALLET,
    kind: 'agent',
    signer: 'local',
    label: 'research-bot',
    pubkey: bs58.encode(new Uint8Array(32).fill(3)),
    state: 'active',
    created_at: '2026-04-01T12:00:00Z',
    policy: policy(p),
  };
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
    asset: 'USDC',
    currency: 'USD',
    spent_today_eur: 0,
    remaining_today_eur: 0,
  };
}

/** Page holds the wallet as the wallet page does: a saved one replaces it. */
function Page({ agent, people, assets, onSaved }: { agent: Agent; people?: number; assets?: Asset[]; onSaved: (a: Wallet) => void }) {
  const [shown, setShown] = useState<Pick<Wallet, 'id' | 'policy'>>(agent);
  const [seen, setSeen] = useState(agent);
  if (agent !== seen) {
    setSeen(agent);
    setShown(agent);
  }
  return (
    <PolicyEditor
      agent={shown}
      people={people}
      assets={assets}
      onSaved={(a) => {
        onSaved(a);
        setShown(a);
      }}
    />
  );
}

function setup(agent = agentWith(), people?: number, assets?: Asset[]) {
  const onSaved = vi.fn();
  const view = render(<Page agent={agent} people={people} assets={assets} onSaved={onSaved} />);
  const user = userEvent.setup();
  const form = screen.getByRole('form', { name: 'Edit the policy' });
  const changes = screen.getByRole('region', { name: 'Changes' });
  const save = screen.getByRole('button', { name: 'Save policy' }) as HTMLButtonElement;
  const discard = screen.getByRole('button', { name: 'Discard changes' }) as HTMLButtonElement;
  const field = (name: string) => within(form).getByRole('textbox', { name }) as HTMLInputElement;
  /** listed is the changes as the list shows them. */
  const listed = () =>
    within(changes)
      .queryAllByRole('listitem')
      .map((li) => li.textContent);
  /** retype replaces what a field holds with text, as a person selecting it and typing would. */
  const retype = async (input: HTMLElement, text: string) => {
    await user.clear(input);
    if (text) await user.type(input, text);
  };
  return { ...view, onSaved, user, form, changes, save, discard, field, retype, listed };
}

beforeEach(() => {
  setCSRF('csrf-token');
});

test('shows the current policy with nothing to save', () => {
  const requests = recordedFetch(() => ({ status: 500 }));
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
    recordedFetch(() => ({ status: 500 }));
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
    recordedFetch(() => ({ status: 500 }));
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
  const requests = recordedFetch(saved(agent));
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
  const requests = recordedFetch(saved(agent));
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
  const requests = recordedFetch(saved(agent));
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
  const requests = recordedFetch(() => ({ status: 403, body: { error: 'viewers may not change a policy' } }));
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
  const requests = recordedFetch(() => ({ status: 500 }));
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
  recordedFetch(() => ({ status: 500 }));
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

  test('checks its fields and previews under the current policy (no policy sent) when nothing changed', async () => {
    const requests = recordedFetch(() => ({ status: 200, body: preview('sent') }));
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
        body: { to: OTHER, amount: 5, memo: 'dry run' },
        csrf: 'csrf-token',
      },
    ]);
    const result = within(tryIt).getByRole('status');
    expect(result.textContent).toMatch(/^Under the current policy: sent/);
    expect(within(result).getByTestId('preview-remaining').textContent).toBe('87.50 USDC');
    expect(within(result).queryByTestId('preview-current')).toBeNull();
  });

  test('with changes, compares the proposed policy with the current one, and saves nothing', async () => {
    const requests = recordedFetch((r) => {
      const proposed = (r.body as { policy?: PolicyInput }).policy;
      return { status: 200, body: proposed ? preview('blocked', 'exceeds_max_tx') : preview('pending_approval') };
    });
    const s = setup();
    await s.retype(s.field('Max per send'), '8');
    const tryIt = await fill(s, OTHER, '12');
    expect(within(tryIt).getByText(/under the proposed policy/)).toBeTruthy();
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));

    expect(requests.map((r) => [r.method, r.body])).toEqual([
      // The proposal is what a save would send: the API reads it as a change of the wallet's policy.
      ['POST', { to: OTHER, amount: 12, policy: { max_tx_usdc: 8 } }],
      ['POST', { to: OTHER, amount: 12 }],
    ]);
    const proposed = within(tryIt).getByTestId('preview-outcome');
    expect(proposed.querySelector('[data-outcome]')?.textContent).toBe('blocked');
    expect(proposed.querySelector('[data-reason]')?.textContent).toBe('exceeds_max_tx');
    expect(within(tryIt).getByTestId('preview-current').textContent).toBe('pending approval');
    expect(s.onSaved).not.toHaveBeenCalled();
  });

  test('in another asset the policy lists: the preview asks for it and shows the EUR day', async () => {
    const requests = recordedFetch(() => ({
      status: 200,
      body: { ...preview('sent'), asset: 'EURC', currency: 'EUR', daily_limit_eur: 20, spent_today_eur: 5, remaining_today_eur: 15 },
    }));
    const s = setup(agentWith({ assets: ['USDC', 'EURC'], daily_limit_eur: 20, max_tx_eur: 10, approval_threshold_eur: 10 }));
    const tryIt = screen.getByRole('form', { name: 'Try a send' });
    await s.user.selectOptions(within(tryIt).getByRole('combobox', { name: 'Asset' }), 'EURC');
    await fill(s, OTHER, '2');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));
    expect(requests.map((r) => r.body)).toEqual([{ to: OTHER, amount: 2, asset: 'EURC' }]);
    expect((await within(tryIt).findByTestId('preview-remaining-eur')).textContent).toBe('15.00 EUR');
  });

  test('an answer about an older draft is not shown', async () => {
    let answer: (a: Answer) => void = () => {};
    recordedFetch(() => new Promise<Answer>((resolve) => (answer = resolve)));
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
    recordedFetch(() => ({ status: 429, body: { error: 'too many requests' } }));
    const s = setup();
    const tryIt = await fill(s, OTHER, '1');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));
    expect(within(tryIt).getByRole('alert').textContent).toBe('too many requests');
  });
});

describe('the optional rules', () => {
  const HOURS = { timezone: 'America/New_York', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00' };
  const ruled = () =>
    agentWith({
      approvals_required: 2,
      weekly_limit_usdc: 300,
      monthly_limit_usdc: 1000,
      max_tx_per_hour: 10,
      max_tx_per_day: 40,
      active_hours: HOURS,
      outside_active_hours: 'approve',
    });
  const time = (name: string) => screen.getByLabelText(name) as HTMLInputElement;
  const day = (name: string) => screen.getByRole('checkbox', { name }) as HTMLInputElement;

  test('a wallet without them: empty limits, one approval, any time', () => {
    recordedFetch(() => ({ status: 500 }));
    const { field, form } = setup();
    expect(field('Approvals needed').value).toBe('1');
    for (const name of ['Weekly limit', 'Monthly limit', 'Payments per hour', 'Payments per day']) expect(field(name).value).toBe('');
    expect(
      screen.getByRole('textbox', { name: 'Weekly limit', description: 'USDC the last 7 days (rolling) may send in all; empty: no limit' }),
    ).toBeTruthy();
    const hours = within(form).getByRole('group', { name: 'Active hours' });
    expect(within(hours).getByText('Any time: the agent may pay at any hour of any day.')).toBeTruthy();
    expect(within(hours).getByRole('button', { name: 'Set active hours' })).toBeTruthy();
    expect(within(hours).queryByRole('checkbox')).toBeNull();
  });

  test('a wallet with them: each shown in its field', () => {
    recordedFetch(() => ({ status: 500 }));
    const { field, save } = setup(ruled());
    expect(['Approvals needed', 'Weekly limit', 'Monthly limit', 'Payments per hour', 'Payments per day'].map((name) => field(name).value)).toEqual([
      '2',
      '300',
      '1000',
      '10',
      '40',
    ]);
    expect((screen.getByRole('combobox', { name: 'Time zone' }) as HTMLInputElement).value).toBe('America/New_York');
    expect([time('Opens at').value, time('Closes at').value]).toEqual(['09:00', '18:00']);
    expect(['Monday', 'Friday', 'Saturday', 'Sunday'].map((d) => day(d).checked)).toEqual([true, true, false, false]);
    expect((screen.getByRole('radio', { name: 'Parked for approval, whatever its amount' }) as HTMLInputElement).checked).toBe(true);
    expect(save.disabled).toBe(true);
  });

  test('sets approvals, a weekly limit, a count and active hours: each change old → new, and Save sends them', async () => {
    const agent = agentWith();
    const requests = recordedFetch(saved(agent));
    const { field, retype, user, save, listed, onSaved } = setup(agent, 3);
    expect(screen.getByRole('textbox', { name: 'Approvals needed', description: 'people who must approve a parked payment (1 to 3)' })).toBeTruthy();
    await retype(field('Approvals needed'), '2');
    await retype(field('Weekly limit'), '250.5');
    await retype(field('Payments per hour'), '10');
    await user.click(screen.getByRole('button', { name: 'Set active hours' }));
    await retype(screen.getByRole('combobox', { name: 'Time zone' }), 'Europe/Paris');
    await user.click(day('Friday'));
    await user.click(day('Saturday'));
    await retype(time('Opens at'), '08:30');
    await retype(time('Closes at'), '17:00');
    await user.click(screen.getByRole('radio', { name: 'Parked for approval, whatever its amount' }));

    expect(listed()).toEqual([
      'Approvals needed: 1 person → 2 people',
      'Weekly limit: no limit → 250.50 USDC',
      'Payments per hour: no limit → 10 payments',
      'Active hours: any time → Mon–Thu, Sat 08:30–17:00 (Europe/Paris)',
      'Outside active hours: blocked → parked for approval',
    ]);
    await user.click(save);
    expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([
      [
        'PATCH',
        `/api/public/v1/agents/${WALLET}/policy`,
        {
          approvals_required: 2,
          weekly_limit_usdc: 250.5,
          max_tx_per_hour: 10,
          active_hours: { timezone: 'Europe/Paris', days: ['mon', 'tue', 'wed', 'thu', 'sat'], from: '08:30', to: '17:00' },
          outside_active_hours: 'approve',
        },
      ],
    ]);
    expect(onSaved).toHaveBeenCalledOnce();
    expect(screen.getByText('Saved.')).toBeTruthy();
    expect(field('Weekly limit').value).toBe('250.5');
    expect(save.disabled).toBe(true);
  });

  test('ticks EURC from the network’s assets and sets its EUR limits: the EUR fields appear, each change listed, Save sends them', async () => {
    const agent = agentWith();
    const requests = recordedFetch(saved(agent));
    // What the issuer can do does not bear on the policy editor.
    const facts = { amounts: 'raw', freeze_authority: null, issuer_can_seize: false, permanent_delegate: null, default_frozen: false } as const;
    const network: Asset[] = [
      { symbol: 'USDC', mint: 'M1', token_program: 'token', decimals: 6, currency: 'USD', ...facts },
      { symbol: 'PYUSD', mint: 'M2', token_program: 'token-2022', decimals: 6, currency: 'USD', ...facts },
      { symbol: 'EURC', mint: 'M3', token_program: 'token', decimals: 6, currency: 'EUR', ...facts },
    ];
    const { field, retype, user, save, listed } = setup(agent, undefined, network);
    const asset = (name: string) => screen.getByRole('checkbox', { name: new RegExp(`^${name}`) }) as HTMLInputElement;
    expect(['USDC', 'PYUSD', 'EURC'].map((s) => asset(s).checked)).toEqual([true, false, false]);
    // No EUR asset, no EUR limit: the EUR fields are not offered.
    expect(screen.queryByRole('group', { name: 'EUR limits' })).toBeNull();
    await user.click(asset('EURC'));
    await user.click(asset('PYUSD'));
    expect(screen.getByRole('group', { name: 'EUR limits' })).toBeTruthy();
    await retype(field('Euros a day'), '50');
    await retype(field('Euros a send'), '20');
    await retype(field('EUR approval threshold'), 'x');
    expect(field('EUR approval threshold').getAttribute('aria-invalid')).toBe('true');
    await retype(field('EUR approval threshold'), '10');
    expect(listed()).toEqual([
      'Assets: USDC → USDC, EURC, PYUSD',
      'Euros a day: not set: no EUR payments → 50.00 EUR',
      'Euros a send: not set: no EUR payments → 20.00 EUR',
      'EUR approval threshold: not set: every EUR payment waits → 10.00 EUR',
    ]);
    await user.click(save);
    expect(requests.map((r) => r.body)).toEqual([
      { assets: ['USDC', 'EURC', 'PYUSD'], daily_limit_eur: 50, max_tx_eur: 20, approval_threshold_eur: 10 },
    ]);
  });

  test('clearing a limit and removing the hours mean none: listed as such and sent as null', async () => {
    const agent = ruled();
    const requests = recordedFetch(saved(agent));
    const { field, retype, user, save, listed } = setup(agent);
    await retype(field('Weekly limit'), '');
    await retype(field('Payments per day'), '');
    expect(screen.getByRole('textbox', { name: 'Weekly limit' }).getAttribute('aria-invalid')).toBe('false');
    await user.click(screen.getByRole('button', { name: 'Remove active hours' }));
    expect(screen.getByRole('button', { name: 'Set active hours' })).toBeTruthy();
    expect(listed()).toEqual([
      'Weekly limit: 300.00 USDC → no limit',
      'Payments per day: 40 payments → no limit',
      'Active hours: Mon–Fri 09:00–18:00 (America/New_York) → any time',
    ]);
    await user.click(save);
    expect(requests.map((r) => r.body)).toEqual([{ weekly_limit_usdc: null, max_tx_per_day: null, active_hours: null }]);
  });

  const zone = () => screen.getByRole('combobox', { name: 'Time zone' });
  test.each([
    ['Approvals needed', '0', 'At least 1.'],
    ['Approvals needed', '3', "At most 2: the account's owners and approvers."],
    ['Monthly limit', '1.1234567', 'At most 6 decimals.'],
    ['Payments per hour', '2.5', 'A whole number, like 10.'],
    ['Time zone', 'Mars/Olympus', 'Not a time zone: pick one from the list (Region/City, or UTC).'],
    ['Closes at', '09:00', 'Must differ from the opening time.'],
  ])('%s %j: %s, and no save', async (name, typed, message) => {
    recordedFetch(() => ({ status: 500 }));
    const { retype, save, changes } = setup(ruled(), 2);
    const input = name === 'Time zone' ? zone() : name === 'Closes at' ? time(name) : screen.getByRole('textbox', { name });
    await retype(input, typed);
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(input.getAttribute('aria-describedby')!)?.textContent).toBe(message);
    expect(save.disabled).toBe(true);
    expect(within(changes).getByText('Fix the errors above to see the changes and save.')).toBeTruthy();
  });

  test('active hours need a day', async () => {
    recordedFetch(() => ({ status: 500 }));
    const { user, save, changes } = setup(ruled());
    for (const d of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) await user.click(day(d));
    expect(screen.getByRole('group', { name: 'Days' }).textContent).toMatch(/Pick at least one day\.$/);
    expect(save.disabled).toBe(true);
    await user.click(day('Sunday'));
    expect(save.disabled).toBe(false);
    expect(within(changes).getByRole('listitem').textContent).toBe(
      'Active hours: Mon–Fri 09:00–18:00 (America/New_York) → Sun 09:00–18:00 (America/New_York)',
    );
  });

  test('a closing time of 00:00 is midnight, the end of the day (sent as 24:00)', async () => {
    const agent = agentWith({ active_hours: { ...HOURS, to: '24:00' } });
    const requests = recordedFetch(saved(agent));
    const { retype, user, save } = setup(agent);
    expect(time('Closes at').value).toBe('00:00');
    expect(screen.getByText('Midnight, the end of the day.')).toBeTruthy();
    expect(save.disabled).toBe(true);
    await retype(time('Opens at'), '07:00');
    await user.click(save);
    expect(requests.map((r) => r.body)).toEqual([{ active_hours: { ...HOURS, from: '07:00', to: '24:00' } }]);
  });

  test('the preview names the rule that decides and shows the week, month, counts and hours', async () => {
    const requests = recordedFetch((r) => {
      const proposed = (r.body as { policy?: PolicyInput }).policy;
      const base = preview('blocked', 'exceeds_weekly_limit');
      return {
        status: 200,
        body: proposed
          ? {
              ...base,
              rule: 'weekly_limit_usdc',
              weekly_limit_usdc: 20,
              spent_week_usdc: 15,
              remaining_week_usdc: 5,
              monthly_limit_usdc: 1000,
              spent_month_usdc: 40,
              remaining_month_usdc: 960,
              max_tx_per_hour: 10,
              payments_last_hour: 3,
              payments_last_day: 7,
              active_hours: HOURS,
              within_active_hours: false,
              approvals_required: 2,
            }
          : { ...preview('pending_approval'), rule: 'approval_threshold_usdc' },
      };
    });
    const s = setup(agentWith({ monthly_limit_usdc: 1000, max_tx_per_day: 5 }));
    await s.retype(s.field('Weekly limit'), '20');
    await s.retype(s.field('Payments per day'), '');
    const tryIt = screen.getByRole('form', { name: 'Try a send' });
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'To' }), OTHER);
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'Amount' }), '12');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));

    // The proposal: what a save would send, the count removed as null.
    expect(requests.map((r) => r.body)).toEqual([
      { to: OTHER, amount: 12, policy: { weekly_limit_usdc: 20, max_tx_per_day: null } },
      { to: OTHER, amount: 12 },
    ]);
    const outcome = within(tryIt).getByTestId('preview-outcome');
    expect(outcome.textContent).toBe('blocked exceeds_weekly_limit · decided by Weekly limit');
    expect(outcome.querySelector('[data-rule]')?.getAttribute('data-rule')).toBe('weekly_limit_usdc');
    expect(within(tryIt).getByTestId('preview-current').textContent).toBe('pending approval · decided by Approval from');
    const figure = (id: string) => within(tryIt).getByTestId(id).textContent;
    expect(figure('preview-remaining-week')).toBe('5.00 USDC');
    expect(figure('preview-remaining-month')).toBe('960.00 USDC');
    expect(figure('preview-hour')).toBe('3 of 10');
    expect(figure('preview-day')).toBe('7 (no limit)');
    expect(figure('preview-within')).toBe('no');
    expect(figure('preview-approvals')).toBe('2');
    const deciding = within(tryIt).getByTestId('preview-remaining-week').parentElement!;
    expect(deciding.dataset.deciding).toBe('true');
    expect(within(tryIt).getByTestId('preview-hour').parentElement!.dataset.deciding).toBeUndefined();
    expect(within(tryIt).getByText('Spent in 7 days').nextSibling?.textContent).toBe('15.00 USDC');
  });

  test('a preview without the rules says so', async () => {
    recordedFetch(() => ({ status: 200, body: preview('sent') }));
    const s = setup();
    const tryIt = screen.getByRole('form', { name: 'Try a send' });
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'To' }), OTHER);
    await s.user.type(within(tryIt).getByRole('textbox', { name: 'Amount' }), '1');
    await s.user.click(within(tryIt).getByRole('button', { name: 'Try it' }));
    expect(within(tryIt).getByTestId('preview-outcome').textContent).toBe('sent');
    expect(within(tryIt).getByTestId('preview-remaining-week').textContent).toBe('no weekly limit');
    expect(within(tryIt).getByTestId('preview-remaining-month').textContent).toBe('no monthly limit');
    expect(within(tryIt).getByTestId('preview-hour').textContent).toBe('1 (no limit)');
    expect(within(tryIt).getByTestId('preview-within').textContent).toBe('no active hours');
    expect(within(tryIt).queryByText(/decided by/)).toBeNull();
  });
});

test('those who only read see every rule in words; a list sums a policy up in a line', () => {
  const hours = { timezone: 'Europe/Paris', days: ['sat', 'sun'], from: '10:00', to: '24:00' };
  const p = agentWith({
    approvals_required: 2,
    weekly_limit_usdc: 300,
    max_tx_per_hour: 1,
    active_hours: hours,
    outside_active_hours: 'approve',
  }).policy;
  const { container, rerender } = render(<PolicyView policy={p} />);
  const shown = () =>
    Object.fromEntries([...container.querySelectorAll('dd[data-field]')].map((dd) => [(dd as HTMLElement).dataset.field, dd.textContent]));
  expect(shown()).toEqual({
    daily_limit_usdc: '100.00 USDC',
    max_tx_usdc: '20.00 USDC',
    approval_threshold_usdc: '10.00 USDC',
    approvals_required: '2 people',
    assets: 'USDC',
    weekly_limit_usdc: '300.00 USDC',
    monthly_limit_usdc: 'no limit',
    max_tx_per_hour: '1 payment',
    max_tx_per_day: 'no limit',
    active_hours: 'Sat, Sun 10:00–24:00 (Europe/Paris)',
    outside_active_hours: 'parked for approval',
  });
  expect(policySummary(p)).toBe(
    'max 20.00 USDC a send · 100.00 USDC a day · 300.00 USDC a week · at most 1 payment an hour · Sat, Sun 10:00–24:00 (Europe/Paris) · approval from 10.00 USDC · 2 approvals · any recipient',
  );
  // A EUR limit set: the EUR limits are shown, and the summary names the assets.
  const eur = agentWith({ assets: ['USDC', 'EURC'], daily_limit_eur: 50, max_tx_eur: 20 }).policy;
  rerender(<PolicyView policy={eur} />);
  expect([shown().assets, shown().daily_limit_eur, shown().max_tx_eur, shown().approval_threshold_eur, shown().weekly_limit_eur]).toEqual([
    'USDC, EURC',
    '50.00 EUR',
    '20.00 EUR',
    'not set: every EUR payment waits',
    'no limit',
  ]);
  expect(policySummary(eur)).toContain('50.00 EUR a day · approval from 10.00 USDC · in USDC, EURC');
  // Without hours, what happens outside them is not said.
  rerender(<PolicyView policy={agentWith().policy} />);
  expect(shown().active_hours).toBe('any time');
  expect(shown().outside_active_hours).toBeUndefined();
  expect(policySummary(agentWith().policy)).toBe('max 20.00 USDC a send · 100.00 USDC a day · approval from 10.00 USDC · any recipient');
});
