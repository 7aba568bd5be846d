// Wallets (the API's agents): each with its address, balance, state and
// policy, and what happened to it (payments, approvals, policy changes).
//
// A policy is a document the owner edits and sends back: the pages read
// it, the preview of a send and the patch in the API's own shape.
import { infiniteQueryOptions, keepPreviousData, queryOptions } from '@tanstack/react-query';
import { API, type Page, type Schemas, call, date } from './api';
import { type Approval, listWalletApprovals } from './approvals';
import { type AuditEntry, listAudit } from './audit';
import { cursorPages, poll } from './queryClient';
import { type Transaction, listTransactions } from './transactions';

export type WalletFromAPI = Schemas['Agent'];
export type Balance = Schemas['Balance'];
export type Policy = Schemas['Policy'];
export type PolicyInput = Schemas['PolicyInput'];
export type Preview = Schemas['PreviewOutputBody'];
export type SendBody = Schemas['SendBody'];
export type WalletState = WalletFromAPI['state'];
/** Labels names allowlisted addresses: address → label (only labelled ones). */
export type Labels = Record<string, string>;

/** Wallet is a wallet as the pages read it. */
export interface Wallet {
  id: string;
  label: string;
  /** Its address. */
  pubkey: string;
  state: WalletState;
  createdAt: Date;
  /** Where its key lives: local (sealed in the database), pkcs11 (an HSM), vault or awskms. */
  signer: WalletFromAPI['signer'];
  /** When an owner exported its secret, if ever: it then exists outside the service for good. */
  exportedAt?: Date;
  policy: Policy;
  /** Its SOL and each asset's amount, read from the chain: only in the answers that read it. */
  balance?: Balance;
}

export const toWallet = (a: WalletFromAPI): Wallet => ({
  id: a.id,
  label: a.label,
  pubkey: a.pubkey,
  state: a.state,
  createdAt: date(a.created_at),
  signer: a.signer,
  ...(a.exported_at ? { exportedAt: date(a.exported_at) } : {}),
  policy: a.policy,
  ...(a.balance ? { balance: a.balance } : {}),
});

/**
 * walletKeys name the wallets' reads. walletKeys.all is the lists (a new
 * wallet, a new label); walletKeys.details each wallet's page (its
 * balance, activity, history, ledger and differences); walletKeys.balances
 * the chain reads.
 */
export const walletKeys = {
  all: ['wallets'] as const,
  list: (q: string) => ['wallets', 'list', q] as const,
  newest: () => ['wallets', 'newest'] as const,
  labels: () => ['wallets', 'labels'] as const,
  details: ['wallet'] as const,
  detail: (id: string) => ['wallet', id] as const,
  activity: (id: string) => ['wallet', id, 'activity'] as const,
  history: (id: string, change: string) => ['wallet', id, 'history', change] as const,
  /** Its balance of an asset (or all) over a range (services/ledger.ts), and the differences between chain and ledger. */
  ledger: (id: string, range: string, asset = 'USDC') => ['wallet', id, 'ledger', range, asset] as const,
  differences: (id: string) => ['wallet', id, 'differences'] as const,
  balances: ['balance'] as const,
  balance: (id: string) => ['balance', id] as const,
};

const walletPath = (id: string) => `${API}/agents/${encodeURIComponent(id)}`;

/** listWallets is a page of the wallets, newest first; q keeps those whose label contains it or whose address starts with it. */
export async function listWallets(q: string, cursor?: string, limit = 50, signal?: AbortSignal): Promise<Page<Wallet>> {
  const p = new URLSearchParams({ limit: String(limit) });
  if (q) p.set('q', q);
  if (cursor) p.set('cursor', cursor);
  const r = await call<Schemas['ListAgentsOutputBody']>('GET', `${API}/agents?${p}`, undefined, signal);
  return { items: r.agents.map(toWallet), nextCursor: r.next_cursor };
}

/** walletsQuery pages the wallets a search keeps ("More wallets" appends the next page). */
export const walletsQuery = (q: string) =>
  infiniteQueryOptions({
    queryKey: walletKeys.list(q),
    queryFn: ({ pageParam, signal }) => listWallets(q, pageParam, 50, signal),
    ...cursorPages,
  });

/** WalletLabel names a wallet in lists and filters. */
export type WalletLabel = { id: string; label: string };

/** walletLabelsQuery is the first 100 wallets' names, for filters and key scopes. */
export const walletLabelsQuery = () =>
  queryOptions({
    queryKey: walletKeys.labels(),
    queryFn: async ({ signal }): Promise<WalletLabel[]> =>
      (await call<Schemas['ListAgentsOutputBody']>('GET', `${API}/agents?limit=100`, undefined, signal)).agents.map((a) => ({
        id: a.id,
        label: a.label,
      })),
  });

/**
 * walletQuery reads a wallet with its balance, read from the chain on each
 * load: polled less often than the inbox, whatever the event stream says.
 */
export const walletQuery = (id: string) =>
  queryOptions({
    queryKey: walletKeys.detail(id),
    queryFn: ({ signal }) => call<WalletFromAPI>('GET', walletPath(id), undefined, signal).then(toWallet),
    ...poll(5000, false),
  });

/** WalletActivity is a wallet's latest payments and approvals. */
export type WalletActivity = { txs: Transaction[]; approvals: Approval[] };

/** walletActivityQuery reads a wallet's latest 20 payments and approvals together. */
export const walletActivityQuery = (id: string) =>
  queryOptions({
    queryKey: walletKeys.activity(id),
    queryFn: async ({ signal }): Promise<WalletActivity> => {
      const [txs, approvals] = await Promise.all([
        listTransactions({ wallet_id: id }, undefined, 20, signal).then((p) => p.items),
        listWalletApprovals(id, signal),
      ]);
      return { txs, approvals };
    },
    ...poll(10000),
  });

export const HISTORY_ACTIONS = ['policy.updated', 'wallet.frozen', 'wallet.unfrozen'] as const;

/**
 * walletHistoryQuery reads a wallet's policy changes, freezes and
 * unfreezes, newest first. change is what the page last saw of the policy
 * and state (none yet: ''): a new one reads the history again, the last
 * one showing meanwhile.
 */
export const walletHistoryQuery = (id: string, change: string) =>
  queryOptions({
    queryKey: walletKeys.history(id, change),
    queryFn: async ({ signal }): Promise<AuditEntry[]> => {
      const target = `wallet:${id}`;
      const pages = await Promise.all(HISTORY_ACTIONS.map((action) => listAudit({ action, target }, undefined, signal)));
      return pages.flatMap((p) => p.items).sort((a, b) => b.seq - a.seq);
    },
    enabled: change !== '',
    placeholderData: keepPreviousData,
  });

/** getBalance reads one wallet's SOL and USDC from the chain (no cache on the server). */
export const getBalance = (id: string, signal?: AbortSignal) =>
  call<Balance>('GET', `${API}/wallets/${encodeURIComponent(id)}/balance`, undefined, signal);

export const createWallet = (label: string, policy: PolicyInput) => call<WalletFromAPI>('POST', `${API}/agents`, { label, policy }).then(toWallet);
export const freezeWallet = (id: string) => call<WalletFromAPI>('POST', `${walletPath(id)}/freeze`).then(toWallet);
export const unfreezeWallet = (id: string) => call<WalletFromAPI>('POST', `${walletPath(id)}/unfreeze`).then(toWallet);
export const updatePolicy = (id: string, patch: PolicyInput) => call<WalletFromAPI>('PATCH', `${walletPath(id)}/policy`, patch).then(toWallet);
/** previewSend evaluates a send without making it; policy (when given) stands in for the wallet's. */
export const previewSend = (id: string, body: SendBody, policy?: PolicyInput) =>
  call<Preview>('POST', `${walletPath(id)}/send/preview`, policy ? { ...body, policy } : body);
/** fundWallet mints test USDC and airdrops SOL to the wallet (local chains only: 409 elsewhere). */
export const fundWallet = (id: string, amounts: Schemas['FundInputBody']) =>
  call<Balance>('POST', `${API}/wallets/${encodeURIComponent(id)}/fund`, amounts);
