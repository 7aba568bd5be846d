// The people of the account: who signs in with which address, their role,
// and the Slack member their clicks on approval messages count as.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call, date } from './api';
import type { Role } from './session';

export type UserFromAPI = Schemas['UserOut'];

/** User is a person of the account as the pages read it. */
export interface User {
  address: string;
  role: Role;
  createdAt: Date;
  /** The API keys they made (directly or through their keys) still in use. */
  liveKeys: number;
  slackUserId: string | null;
}

export const toUser = (u: UserFromAPI): User => ({
  address: u.address,
  role: u.role,
  createdAt: date(u.created_at),
  liveKeys: u.live_keys,
  slackUserId: u.slack_user_id,
});

export const userKeys = {
  all: ['users'] as const,
};

/** usersQuery reads the account's people (one cache entry for every page that shows them). */
export const usersQuery = () =>
  queryOptions({
    queryKey: userKeys.all,
    queryFn: async ({ signal }) => (await call<{ users: UserFromAPI[] }>('GET', `${API}/users`, undefined, signal)).users.map(toUser),
  });

const userPath = (address: string) => `${API}/users/${encodeURIComponent(address)}`;

export const addUser = (address: string, role: Role) => call<UserFromAPI>('POST', `${API}/users`, { address, role }).then(toUser);
export const changeUser = (address: string, role: Role) => call<UserFromAPI>('PATCH', userPath(address), { role }).then(toUser);
export const removeUser = (address: string) => call<void>('DELETE', userPath(address));

/** setSlackMember links a person to a Slack member id (null unlinks): that member's clicks on approval messages count as them. */
export const setSlackMember = (address: string, id: string | null) =>
  call<UserFromAPI>('PATCH', userPath(address), { slack_user_id: id }).then(toUser);
