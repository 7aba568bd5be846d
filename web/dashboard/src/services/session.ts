// The signed-in person's session (the dashboard's session API): who they
// are, the account on screen, their role there and their other accounts.
import { SESSION, call, cancelInflight } from './api';

export type Role = 'owner' | 'approver' | 'viewer';
export type Network = 'devnet' | 'mainnet';

/** MembershipFromAPI is one account the person belongs to, as the API sends it. */
export interface MembershipFromAPI {
  account_id: string;
  network: Network;
  role: Role;
}

/** SessionFromAPI is the session as the API sends it. */
export interface SessionFromAPI {
  address: string;
  account_id: string;
  role: Role;
  network: Network;
  csrf_token: string;
  accounts: MembershipFromAPI[];
  /** The service runs on a local chain: the wallet page offers test funds. */
  local_chain: boolean;
}

export interface Membership {
  accountId: string;
  network: Network;
  role: Role;
}

/** Session is the signed-in person's session as the pages read it. */
export interface Session {
  address: string;
  accountId: string;
  role: Role;
  network: Network;
  csrfToken: string;
  accounts: Membership[];
  /** The service runs on a local chain: the wallet page offers test funds. */
  localChain: boolean;
}

export const toSession = (s: SessionFromAPI): Session => ({
  address: s.address,
  accountId: s.account_id,
  role: s.role,
  network: s.network,
  csrfToken: s.csrf_token,
  accounts: s.accounts.map((m) => ({ accountId: m.account_id, network: m.network, role: m.role })),
  localChain: s.local_chain,
});

/** SignInInput is the sign-in message's fields as the server issued them (Wallet Standard's solana:signIn input). */
export type SignInInput = Record<string, string>;

export const getSession = () => call<SessionFromAPI>('GET', SESSION).then(toSession);

/** challenge asks the server for a sign-in input ({} as JSON: the sign-in routes take only application/json, which another site's page cannot send). */
export const challenge = () => call<{ input: SignInInput }>('POST', `${SESSION}/challenge`, {}).then((r) => r.input);

/** verify posts the signed message; the answer is the new session. */
export const verify = (body: { nonce: string; address: string; message: string; signature: string }) =>
  call<SessionFromAPI>('POST', SESSION, body).then(toSession);

export const signOut = () => {
  cancelInflight();
  return call<void>('DELETE', SESSION);
};

export const switchAccount = async (accountID: string) => {
  cancelInflight();
  const s = await call<SessionFromAPI>('POST', `${SESSION}/account`, { account_id: accountID });
  cancelInflight(); // and those started while the switch was under way
  return toSession(s);
};
