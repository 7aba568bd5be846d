// The people of the account as the lazily loaded pages read them: the
// users page, and the policy editor (whose approvals are bounded by the
// owners and approvers). Kept out of api.ts and queries.ts so the first
// page does not carry them.
import { API, type User, call, listUsers } from './api';
import { keys } from './queries';

/** usersQuery reads the account's people (one cache entry for every page that shows them). */
export const usersQuery = { queryKey: keys.users, queryFn: async () => (await listUsers()).users };

/** setSlackMember links a person to a Slack member id (null unlinks): that member's clicks on approval messages count as them. */
export const setSlackMember = (address: string, id: string | null) =>
  call<User>('PATCH', `${API}/users/${encodeURIComponent(address)}`, { slack_user_id: id });
