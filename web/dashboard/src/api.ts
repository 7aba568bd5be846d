// A small client of the public REST API and the dashboard's session API.
// The session cookie authenticates every call; unsafe ones carry the
// session's CSRF token (the server also checks their Origin).

export const API = '/api/public/v1';
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
}

export interface Approval {
  id: string;
  wallet_id: string;
  agent_label: string;
  amount: number;
  to: string;
  memo: string | null;
  status: 'pending' | 'signing' | 'sent' | 'rejected' | 'expired';
  reason: string | null;
  reason_detail: string | null;
  signature: string | null;
  requested_by: string | null;
  approved_by: string | null;
  rejected_by: string | null;
  note: string | null;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  transaction_status: 'pending' | 'confirmed' | 'failed' | null;
}

export interface ApprovalContext {
  wallet: { id: string; label: string; pubkey: string; state: 'active' | 'frozen' };
  recipient: { address: string; first_payment: boolean; on_allowlist: boolean; allowlist_empty: boolean };
  requester: { id: string; label: string | null; prefix: string } | null;
  if_approved_now: {
    outcome: 'sent' | 'blocked';
    reason: string | null;
    remaining_today_usdc: number;
    remaining_today_after_usdc: number;
  };
  webhook: {
    event: unknown;
    deliveries: { endpoint_id: string; url: string; format: string; status: string; attempts: number }[];
  };
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
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = null;
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
export const signOut = () => call<void>('DELETE', SESSION);
export const switchAccount = (accountID: string) => call<Session>('POST', `${SESSION}/account`, { account_id: accountID });

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
export const reject = (id: string, note: string) =>
  call<Approval>('POST', `${API}/approvals/${encodeURIComponent(id)}/reject`, note ? { note } : {});

export interface AuditEntry {
  id: string;
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string;
  details: unknown;
  prev_hash: string;
  hash: string;
}

export interface AuditVerification {
  intact: boolean;
  entries: number;
  verified_through_seq: number;
  first_break?: { seq: number; entry_id: string; problem: string };
  verified_at: string;
}

export const listAudit = (filter: { action?: string; target?: string }, cursor?: string) => {
  const q = new URLSearchParams({ limit: '50' });
  if (filter.action) q.set('action', filter.action);
  if (filter.target) q.set('target', filter.target);
  if (cursor) q.set('cursor', cursor);
  return call<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `${API}/audit-log?${q}`);
};
export const verifyAudit = () => call<AuditVerification>('GET', `${API}/audit-log/verification`);

export interface Analytics {
  from: string;
  to: string;
  spend: { day: string; wallet_id: string; amount_usdc: number; transactions: number }[];
  wallets: { id: string; label: string; daily_limit_usdc: number }[];
  approvals: { day: string; approved: number; rejected: number; expired: number; median_decision_seconds: number | null }[];
  median_decision_seconds: number | null;
  blocked: { reason: string; count: number }[];
}

export const getAnalytics = (from: string, to: string) => {
  const q = new URLSearchParams();
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  return call<Analytics>('GET', `${API}/analytics?${q}`);
};

export interface User {
  address: string;
  role: Role;
  created_at: string;
}

const userPath = (address: string) => `${API}/users/${encodeURIComponent(address)}`;
export const listUsers = () => call<{ users: User[] }>('GET', `${API}/users`);
export const addUser = (address: string, role: Role) => call<User>('POST', `${API}/users`, { address, role });
export const changeUser = (address: string, role: Role) => call<User>('PATCH', userPath(address), { role });
export const removeUser = (address: string) => call<void>('DELETE', userPath(address));

export interface Key {
  id: string;
  prefix: string;
  role: 'agent' | 'admin';
  wallet_ids: string[] | null;
  label: string | null;
  can_approve: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  replaced_by: string | null;
}

export interface NewKey {
  id: string;
  key: string;
  prefix: string;
}

export const listKeys = (cursor?: string) => {
  const q = new URLSearchParams({ limit: '100' });
  if (cursor) q.set('cursor', cursor);
  return call<{ keys: Key[]; next_cursor: string | null }>('GET', `${API}/keys?${q}`);
};
export const createKey = (body: { role: 'agent' | 'admin'; label?: string; wallet_ids?: string[] }) => call<NewKey>('POST', `${API}/keys`, body);
export const rotateKey = (id: string) => call<NewKey>('POST', `${API}/keys/${encodeURIComponent(id)}/rotate`);
export const revokeKey = (id: string) => call<unknown>('DELETE', `${API}/keys/${encodeURIComponent(id)}`);
export const listWalletLabels = () =>
  call<{ agents: { id: string; label: string }[] }>('GET', `${API}/agents?limit=100`).then((r) => r.agents);

export interface Transaction {
  id: string;
  signature: string;
  amount: number;
  counterparty: string;
  status: 'pending' | 'confirmed' | 'failed';
  memo: string | null;
  created_at: string;
  wallet_id: string;
  approval_id: string | null;
}

export const listTransactions = (f: { wallet_id?: string; status?: string; since?: string; until?: string }, cursor?: string) => {
  const q = new URLSearchParams({ limit: '50' });
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  if (cursor) q.set('cursor', cursor);
  return call<{ transactions: Transaction[]; next_cursor: string | null }>('GET', `${API}/transactions?${q}`);
};
