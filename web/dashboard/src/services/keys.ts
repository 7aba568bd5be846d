// API keys: what agents (and admin tools) authenticate with. Only a key's
// hash is stored: a new key is shown once.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call, date } from './api';

export type KeyFromAPI = Schemas['Key'];
export type NewKeyFromAPI = Schemas['NewKey'];
export type KeyRole = KeyFromAPI['role'];

/** Key is an API key as the pages read it. */
export interface Key {
  id: string;
  prefix: string;
  label: string | null;
  role: KeyRole;
  /** The wallets it may use; null is all. */
  walletIds: string[] | null;
  /** Who made it: user:<address>, key_…; null for the command line. */
  createdBy: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** The key that replaced it, when rotated. */
  replacedBy: string | null;
}

export const toKey = (k: KeyFromAPI): Key => ({
  id: k.id,
  prefix: k.prefix,
  label: k.label,
  role: k.role,
  walletIds: k.wallet_ids,
  createdBy: k.created_by,
  createdAt: date(k.created_at),
  lastUsedAt: date(k.last_used_at),
  revokedAt: date(k.revoked_at),
  replacedBy: k.replaced_by,
});

/** NewKey is a key just made or rotated, with its secret: shown once. */
export interface NewKey {
  id: string;
  key: string;
}

const toNewKey = (k: NewKeyFromAPI): NewKey => ({ id: k.id, key: k.key });

export const keyKeys = {
  all: ['keys'] as const,
};

/** keysQuery reads the account's keys (the first 100). */
export const keysQuery = () =>
  queryOptions({
    queryKey: keyKeys.all,
    queryFn: async ({ signal }) => {
      const r = await call<{ keys: KeyFromAPI[]; next_cursor: string | null }>(
        'GET',
        `${API}/keys?${new URLSearchParams({ limit: '100' })}`,
        undefined,
        signal,
      );
      return r.keys.map(toKey);
    },
  });

const keyPath = (id: string) => `${API}/keys/${encodeURIComponent(id)}`;

export const createKey = (body: { role: KeyRole; label?: string; wallet_ids?: string[] }) =>
  call<NewKeyFromAPI>('POST', `${API}/keys`, body).then(toNewKey);
export const rotateKey = (id: string) => call<NewKeyFromAPI>('POST', `${keyPath(id)}/rotate`).then(toNewKey);
export const revokeKey = (id: string) => call<unknown>('DELETE', keyPath(id)).then(() => undefined);
