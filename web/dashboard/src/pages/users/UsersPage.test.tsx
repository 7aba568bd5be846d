// The users page's Slack member link, as an owner sets, changes and clears
// it and a viewer reads it. The API is a recorded fetch that answers as
// the real one does; the browser test (test/policyrules.test.mjs) runs the
// same page against the real API.
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, test } from 'vitest';
import { setCSRF } from '../../services/api';
import { type Role, type Session, toSession } from '../../services/session';
// The fixtures are what the API sends; the page maps them.
import type { UserFromAPI as User } from '../../services/users';
import { type Request, recordedFetch, renderRoute } from '../../test-render';
import { UsersPage, slackProblem } from './UsersPage';

const ME = 'BPFLoaderUpgradeab1e11111111111111111111111';
const PERSON = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

const session = (role: Role = 'owner'): Session =>
  toSession({
    address: ME,
    account_id: 'acc-1',
    role,
    network: 'devnet',
    csrf_token: 'csrf-token',
    accounts: [],
    local_chain: true,
  });
const user = (address: string, role: Role, slack: string | null = null): User => ({
  address,
  role,
  created_at: '2026-04-01T12:00:00Z',
  live_keys: 0,
  slack_user_id: slack,
});

/** people answers the users list and PATCHes of it as the API does, from a list it keeps. */
function people(list: User[], refuse?: (r: Request) => string | undefined) {
  return recordedFetch((r) => {
    if (r.method === 'GET') return { status: 200, body: { users: list } };
    const why = refuse?.(r);
    if (why) return { status: 409, body: { error: why } };
    const address = decodeURIComponent(r.path.split('/').pop()!);
    const i = list.findIndex((u) => u.address === address);
    list[i] = { ...list[i], ...(r.body as Partial<User>) };
    return { status: 200, body: list[i] };
  });
}

beforeEach(() => setCSRF('csrf-token'));

test.each([
  ['', ''],
  ['U024BE7LH', ''],
  [' W012ABCDEF ', ''],
  ['u024be7lh', 'A Slack member id: U or W, then capital letters and digits (in Slack: the profile, ⋮, Copy member ID).'],
  ['C024BE7LH', 'A Slack member id: U or W, then capital letters and digits (in Slack: the profile, ⋮, Copy member ID).'],
  ['U', 'A Slack member id: U or W, then capital letters and digits (in Slack: the profile, ⋮, Copy member ID).'],
])('slackProblem(%j) → %j', (s, want) => {
  expect(slackProblem(s)).toBe(want);
});

describe('an owner links a person to a Slack member', () => {
  /** open shows the users page to an owner; the person's Slack form is found anew at each step (a change of the link starts it anew). */
  async function open(list: User[]) {
    const requests = people(list);
    renderRoute('/users', <UsersPage session={session()} />);
    await screen.findByRole('form', { name: `Slack member of ${PERSON}` });
    const form = () => screen.getByRole('form', { name: `Slack member of ${PERSON}` });
    return {
      requests,
      u: userEvent.setup(),
      form,
      input: () => within(form()).getByRole('textbox', { name: `Slack member id of ${PERSON}` }) as HTMLInputElement,
      button: (name: string) => within(form()).getByRole('button', { name }) as HTMLButtonElement,
      shown: () => screen.getByText(PERSON).closest('tr')!.querySelector('[data-slack]')!.getAttribute('data-slack'),
      patches: () => requests.filter((r) => r.method === 'PATCH').map((r) => [r.path, r.body, r.csrf]),
    };
  }

  test('links a member id, checked as typed: a PATCH of slack_user_id alone', async () => {
    const { u, form, input, button, shown, patches } = await open([user(ME, 'owner'), user(PERSON, 'approver')]);
    expect(input().value).toBe('');
    expect(button('Link').disabled).toBe(true);
    expect(within(form()).queryByRole('button', { name: 'Unlink' })).toBeNull();
    await u.type(input(), 'u024');
    expect(input().getAttribute('aria-invalid')).toBe('true');
    expect(button('Link').disabled).toBe(true);
    await u.clear(input());
    await u.type(input(), 'U024BE7LH');
    await u.click(button('Link'));
    await within(form()).findByRole('button', { name: 'Unlink' });
    expect(shown()).toBe('U024BE7LH');
    expect(input().value).toBe('U024BE7LH');
    expect(button('Change').disabled).toBe(true);
    expect(patches()).toEqual([[`/api/public/v1/users/${PERSON}`, { slack_user_id: 'U024BE7LH' }, 'csrf-token']]);
  });

  test('changes and unlinks it (null)', async () => {
    const { u, form, input, button, shown, patches } = await open([user(ME, 'owner'), user(PERSON, 'approver', 'U024BE7LH')]);
    expect(input().value).toBe('U024BE7LH');
    await u.clear(input());
    await u.type(input(), 'W0ABC');
    await u.click(button('Change'));
    await waitFor(() => expect(shown()).toBe('W0ABC'));
    expect(input().value).toBe('W0ABC');
    await u.click(button('Unlink'));
    await within(form()).findByRole('button', { name: 'Link' });
    expect(input().value).toBe('');
    expect(shown()).toBe('');
    expect(patches()).toEqual([
      [`/api/public/v1/users/${PERSON}`, { slack_user_id: 'W0ABC' }, 'csrf-token'],
      [`/api/public/v1/users/${PERSON}`, { slack_user_id: null }, 'csrf-token'],
    ]);
  });

  test('a member another person has: the API says so and the field keeps what was typed', async () => {
    people([user(ME, 'owner', 'U111'), user(PERSON, 'approver')], () => 'slack_user_id: another user is linked to this Slack member');
    renderRoute('/users', <UsersPage session={session()} />);
    const u = userEvent.setup();
    const form = await screen.findByRole('form', { name: `Slack member of ${PERSON}` });
    const input = within(form).getByRole('textbox') as HTMLInputElement;
    await u.type(input, 'U111');
    await u.click(within(form).getByRole('button', { name: 'Link' }));
    expect((await screen.findByRole('alert')).textContent).toBe('slack_user_id: another user is linked to this Slack member');
    expect(input.value).toBe('U111');
  });
});

test('a viewer reads who is linked, without a field', async () => {
  const requests = people([user(ME, 'viewer', 'U024BE7LH'), user(PERSON, 'owner')]);
  renderRoute('/users', <UsersPage session={session('viewer')} />);
  const mine = (await screen.findByText(ME)).closest('tr')!;
  expect(within(mine).getByText('U024BE7LH')).toBeTruthy();
  expect(within(screen.getByText(PERSON).closest('tr')!).getByText('not linked')).toBeTruthy();
  expect(screen.queryByRole('textbox')).toBeNull();
  expect(screen.queryByRole('form')).toBeNull();
  expect(requests.every((r) => r.method === 'GET')).toBe(true);
});
