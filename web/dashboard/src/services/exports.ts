// Exports of a wallet's secret: an owner asks for it, sealed to an X25519
// public key they hold the private half of; another owner (one who was an
// owner before it was asked, and not added by the asker) approves or
// rejects it; a worker seals it. Owners only: no other role reads them.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call, date } from './api';
import { poll } from './queryClient';

export type ExportFromAPI = Schemas['WalletExport'];
export type ExportState = ExportFromAPI['state'];

/** EXPORT_STATES are the states of a request, in the order the list shows them. */
export const EXPORT_STATES: readonly ExportState[] = ['pending', 'approved', 'exported', 'rejected', 'void'];

/** Export is a request to export a wallet's secret as the pages read it. */
export interface Export {
  id: string;
  walletId: string;
  state: ExportState;
  /** The X25519 public key (base64) the secret is sealed to. */
  recipient: string;
  /** The owner who asked: user:<address>. */
  requestedBy: string;
  requestedAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  sealedAt: Date | null;
  voidReason: string | null;
  /** Once exported: the secret sealed to the recipient key (base64); only that key's holder opens it. */
  sealedSecret: string | null;
}

export const toExport = (e: ExportFromAPI): Export => ({
  id: e.id,
  walletId: e.wallet_id,
  state: e.state,
  recipient: e.recipient_public_key,
  requestedBy: e.requested_by,
  requestedAt: date(e.requested_at),
  decidedBy: e.decided_by ?? null,
  decidedAt: date(e.decided_at),
  sealedAt: date(e.sealed_at),
  voidReason: e.void_reason ?? null,
  sealedSecret: e.sealed_secret ?? null,
});

/**
 * pendingFirst orders requests for the list: pending ones (what an owner
 * acts on) first, then the rest, each newest first as the API answers.
 */
export const pendingFirst = (es: Export[]): Export[] => [...es.filter((e) => e.state === 'pending'), ...es.filter((e) => e.state !== 'pending')];

/**
 * recipientKeyProblem says why s is not an X25519 public key as the API
 * takes it (standard base64 of 32 bytes); '' when it is one, or empty.
 */
export function recipientKeyProblem(s: string): string {
  const t = s.trim();
  if (t === '') return '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || t.length % 4 !== 0) return 'Not base64: paste the public key as base64 (44 characters ending in =).';
  let n: number;
  try {
    n = atob(t).length;
  } catch {
    return 'Not base64: paste the public key as base64 (44 characters ending in =).';
  }
  return n === 32 ? '' : `An X25519 public key is 32 bytes; this is ${n}.`;
}

/** exportKeys name the exports' reads: the lists (by state) and each request. */
export const exportKeys = {
  all: ['exports'] as const,
  list: (state: ExportState | undefined) => ['exports', 'list', state ?? 'all'] as const,
  detail: (walletId: string, id: string) => ['exports', 'detail', walletId, id] as const,
  wallet: (id: string) => ['exports', 'wallet', id] as const,
};

// No event announces an export's steps: what is shown polls, a little
// slower than the inbox.
const EXPORT_POLL = 5000;

/** exportsQuery reads the account's newest 100 requests (in one state, or all). */
export const exportsQuery = (state?: ExportState) =>
  queryOptions({
    queryKey: exportKeys.list(state),
    queryFn: async ({ signal }) => {
      const q = new URLSearchParams({ limit: '100', ...(state ? { state } : {}) });
      const r = await call<Schemas['ListExportsOutputBody']>('GET', `${API}/exports?${q}`, undefined, signal);
      return r.exports.map(toExport);
    },
    ...poll(EXPORT_POLL, false),
  });

const exportPath = (walletId: string, id: string) => `${API}/wallets/${encodeURIComponent(walletId)}/exports/${encodeURIComponent(id)}`;

/** exportQuery reads one request. */
export const exportQuery = (walletId: string, id: string) =>
  queryOptions({
    queryKey: exportKeys.detail(walletId, id),
    queryFn: async ({ signal }) => toExport(await call<ExportFromAPI>('GET', exportPath(walletId, id), undefined, signal)),
    ...poll(EXPORT_POLL, false),
  });

/** WalletName is what a request's reader needs of its wallet: its name and address. */
export interface WalletName {
  label: string;
  pubkey: string;
}

/** walletNameQuery reads a wallet's name and address, for the requests that name it (they change rarely). */
export const walletNameQuery = (id: string) =>
  queryOptions({
    queryKey: exportKeys.wallet(id),
    queryFn: async ({ signal }): Promise<WalletName> => {
      const a = await call<Schemas['Agent']>('GET', `${API}/agents/${encodeURIComponent(id)}`, undefined, signal);
      return { label: a.label, pubkey: a.pubkey };
    },
    staleTime: 5 * 60_000,
  });

/** requestExport asks for wallet walletId's secret sealed to recipient (base64 X25519). */
export const requestExport = (walletId: string, recipient: string) =>
  call<ExportFromAPI>('POST', `${API}/wallets/${encodeURIComponent(walletId)}/exports`, { recipient_public_key: recipient.trim() }).then(toExport);

/** decideExport approves or rejects a request; the answer is the request after it (approved, or exported once sealed). */
export const decideExport = (walletId: string, id: string, approve: boolean) =>
  call<ExportFromAPI>('POST', `${exportPath(walletId, id)}/${approve ? 'approve' : 'reject'}`).then(toExport);
