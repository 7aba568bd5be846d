// The wallet pages' calls to the public API. Types come from the SDK's
// schema (generated from openapi.yaml), so the dashboard and the SDK read
// the same shapes.
import { API, type Agent, type Approval, type AuditEntry, type Balance, type Schemas, call, listAudit, listTransactions } from './api';

/** Labels names allowlisted addresses: address → label (only labelled ones). */
export type Labels = Record<string, string>;
export type Policy = Schemas['Policy'];
export type PolicyInput = Schemas['PolicyInput'];
export type Preview = Schemas['PreviewOutputBody'];
export type SendBody = Schemas['SendBody'];

const agentPath = (id: string) => `${API}/agents/${encodeURIComponent(id)}`;

export const getAgent = (id: string) => call<Agent>('GET', agentPath(id));
export const createAgent = (label: string, policy: PolicyInput) => call<Agent>('POST', `${API}/agents`, { label, policy });
export const freezeAgent = (id: string) => call<Agent>('POST', `${agentPath(id)}/freeze`);
export const unfreezeAgent = (id: string) => call<Agent>('POST', `${agentPath(id)}/unfreeze`);
export const updatePolicy = (id: string, patch: PolicyInput) => call<Agent>('PATCH', `${agentPath(id)}/policy`, patch);
/** previewSend evaluates a send without making it; policy (when given) stands in for the wallet's. */
export const previewSend = (id: string, body: SendBody, policy?: PolicyInput) =>
  call<Preview>('POST', `${agentPath(id)}/send/preview`, policy ? { ...body, policy } : body);
/** fundWallet mints test USDC and airdrops SOL to the wallet (local chains only: 409 elsewhere). */
export const fundWallet = (id: string, amounts: Schemas['FundInputBody']) =>
  call<Balance>('POST', `${API}/wallets/${encodeURIComponent(id)}/fund`, amounts);

export const walletTransactions = (id: string) => listTransactions({ wallet_id: id }, undefined, 20).then((r) => r.transactions);

/** walletApprovals is the wallet's latest approvals, newest first. */
export const walletApprovals = (id: string) =>
  call<{ approvals: Approval[] }>('GET', `${API}/approvals?${new URLSearchParams({ wallet_id: id, limit: '20' })}`).then((r) => r.approvals);

export const HISTORY_ACTIONS = ['policy.updated', 'wallet.frozen', 'wallet.unfrozen'] as const;

/** walletHistory is the wallet's policy changes, freezes and unfreezes, newest first. */
export async function walletHistory(id: string): Promise<AuditEntry[]> {
  const target = `wallet:${id}`;
  const pages = await Promise.all(HISTORY_ACTIONS.map((action) => listAudit({ action, target })));
  return pages.flatMap((p) => p.entries).sort((a, b) => b.seq - a.seq);
}
