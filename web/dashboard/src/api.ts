// A small client of the public REST API and the dashboard's session API.
// The session cookie authenticates every call; unsafe ones carry the
// session's CSRF token (the server also checks their Origin).

import type { components } from '../../../sdk/typescript/src/schema';

export const API = '/api/public/v1';

// The public API's types are the SDK's, generated from the OpenAPI document.
export type Schemas = components['schemas'];
export type Agent = Schemas['Agent'];
export type Balance = Schemas['Balance'];
export type Approval = Schemas['Approval'];
export type ApprovalContext = Schemas['ApprovalContext'];
export type AuditEntry = Schemas['AuditEntry'];
export type AuditVerification = Schemas['AuditVerificationOutputBody'];
export type Analytics = Schemas['AnalyticsOutputBody'];
export type User = Schemas['UserOut'];
export type Key = Schemas['Key'];
export type NewKey = Schemas['NewKey'];
export type Transaction = Schemas['Transaction'];
export const SESSION = '/api/dashboard/v1/session';

export type Role = 'owner' | 'approver' | 'viewer';

export interface Membership {
  account_id: string;
  network: 'devnet' | 'mainnet';
  role: Role;
}

export interface Session {
  address: string;
  account_id: string;
  role: Role;
  network: 'devnet' | 'mainnet';
  csrf_token: string;
  accounts: Membership[];
  /** The service runs on a local chain: the wallet page offers test funds. */
  local_chain: boolean;
}

export class ApiError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrf = '';

// Requests of the account on screen. A switch (or sign-out) cancels those
// still under way: answered after it, they would be the other account's
// 404s, logged by the browser as errors.
let inflight = new AbortController();
function cancelInflight() {
  inflight.abort();
  inflight = new AbortController();
}

/** setCSRF remembers the session's CSRF token for unsafe calls. */
export function setCSRF(token: string) {
  csrf = token;
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal: inflight.signal,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, `unexpected answer (${res.status})`);
  }
  if (!res.ok) {
    const msg = (data as { error?: string } | null)?.error ?? `request failed (${res.status})`;
    throw new ApiError(res.status, msg);
  }
  return data as T;
}

export const getSession = () => call<Session>('GET', SESSION);
export const signOut = () => {
  cancelInflight();
  return call<void>('DELETE', SESSION);
};
export const switchAccount = async (accountID: string) => {
  cancelInflight();
  const s = await call<Session>('POST', `${SESSION}/account`, { account_id: accountID });
  cancelInflight(); // and those started while the switch was under way
  return s;
};

export const listApprovals = (status?: string, cursor?: string) => {
  const q = new URLSearchParams({ limit: '50' });
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  return call<{ approvals: Approval[]; next_cursor: string | null }>('GET', `${API}/approvals?${q}`);
};
export const getApproval = (id: string) => call<Approval>('GET', `${API}/approvals/${encodeURIComponent(id)}`);
export const getContext = (id: string) => call<ApprovalContext>('GET', `${API}/approvals/${encodeURIComponent(id)}/context`);
export const approve = (id: string, note: string) =>
  call<Approval>('POST', `${API}/approvals/${encodeURIComponent(id)}/approve`, note ? { note } : {});
export const reject = (id: string, note: string) => call<Approval>('POST', `${API}/approvals/${encodeURIComponent(id)}/reject`, note ? { note } : {});

export const listAudit = (filter: { action?: string; target?: string }, cursor?: string) => {
  const q = new URLSearchParams({ limit: '50' });
  if (filter.action) q.set('action', filter.action);
  if (filter.target) q.set('target', filter.target);
  if (cursor) q.set('cursor', cursor);
  return call<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `${API}/audit-log?${q}`);
};
export const verifyAudit = () => call<AuditVerification>('GET', `${API}/audit-log/verification`);

export const getAnalytics = (from: string, to: string) => {
  const q = new URLSearchParams();
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  return call<Analytics>('GET', `${API}/analytics?${q}`);
};

const userPath = (address: string) => `${API}/users/${encodeURIComponent(address)}`;
export const listUsers = () => call<{ users: User[] }>('GET', `${API}/users`);
export const addUser = (address: string, role: Role) => call<User>('POST', `${API}/users`, { address, role });
export const changeUser = (address: string, role: Role) => call<User>('PATCH', userPath(address), { role });
export const removeUser = (address: string) => call<void>('DELETE', userPath(address));

export const listKeys = (cursor?: string) => {
  const q = new URLSearchParams({ limit: '100' });
  if (cursor) q.set('cursor', cursor);
  return call<{ keys: Key[]; next_cursor: string | null }>('GET', `${API}/keys?${q}`);
};
export const createKey = (body: { role: 'agent' | 'admin'; label?: string; wallet_ids?: string[] }) => call<NewKey>('POST', `${API}/keys`, body);
export const rotateKey = (id: string) => call<NewKey>('POST', `${API}/keys/${encodeURIComponent(id)}/rotate`);
export const revokeKey = (id: string) => call<unknown>('DELETE', `${API}/keys/${encodeURIComponent(id)}`);
export const listWalletLabels = () => call<{ agents: { id: string; label: string }[] }>('GET', `${API}/agents?limit=100`).then((r) => r.agents);

/** listAgents is a page of the wallets, newest first; q keeps those whose label contains it or whose address starts with it. */
export const listAgents = (q: string, cursor?: string, limit = 50) => {
  const p = new URLSearchParams({ limit: String(limit) });
  if (q) p.set('q', q);
  if (cursor) p.set('cursor', cursor);
  return call<Schemas['ListAgentsOutputBody']>('GET', `${API}/agents?${p}`);
};

export const listTransactions = (f: { wallet_id?: string; status?: string; since?: string; until?: string }, cursor?: string, limit = 50) => {
  const q = new URLSearchParams({ limit: String(limit) });
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  if (cursor) q.set('cursor', cursor);
  return call<{ transactions: Transaction[]; next_cursor: string | null }>('GET', `${API}/transactions?${q}`);
};
