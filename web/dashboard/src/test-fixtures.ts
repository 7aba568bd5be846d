// Fixtures of the component tests: what the API sends (each builder takes
// the API's fields to change), mapped as the pages read it.
import { type Approval, toApproval, type ApprovalFromAPI } from './services/approvals';
import { type Session, toSession, type Role, type Network } from './services/session';
import { type Transaction, toTransaction, type TransactionFromAPI } from './services/transactions';
import { NO_RULES } from './pages/wallets/policy/policy-draft';
import { type Wallet, toWallet, type WalletFromAPI, type Policy } from './services/wallets';

export const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
export const WALLET_ID = '5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21';

export const policy = (p: Partial<Policy> = {}): Policy => ({
  daily_limit_usdc: 100,
  max_tx_usdc: 20,
  approval_threshold_usdc: 10,
  allowlist: [],
  allowlist_labels: {},
  ...NO_RULES,
  ...p,
});

export const session = (role: Role = 'owner', network: Network = 'devnet', localChain = true): Session =>
  toSession({ address: ADDRESS, account_id: 'acc-1', role, network, csrf_token: 'csrf', accounts: [], local_chain: localChain });

export const wallet = (w: Partial<WalletFromAPI> = {}): Wallet =>
  toWallet({
    id: WALLET_ID,
    kind: 'agent',
    label: 'research-bot',
    pubkey: 'Hk7uVkqN9qRcyM5KgEf4sHo2n1hZDEYYx3mM1wbW6Kx',
    state: 'active',
    created_at: '2026-04-01T12:00:00Z',
    signer: 'local',
    policy: policy(),
    ...w,
  });

/** approvalFromAPI is a pending approval as the API sends it, with a's fields. */
export const approvalFromAPI = (a: Partial<ApprovalFromAPI> = {}): ApprovalFromAPI => ({
  id: 'ap_0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5',
  wallet_id: WALLET_ID,
  agent_label: 'research-bot',
  kind: 'send',
  amount: 25,
  asset: 'USDC',
  to: ADDRESS,
  memo: null,
  status: 'pending',
  reason: null,
  reason_detail: null,
  signature: null,
  requested_by: 'key_1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
  approved_by: null,
  rejected_by: null,
  note: null,
  created_at: '2026-04-01T12:00:00Z',
  expires_at: '2026-04-01T14:00:00Z',
  decided_at: null,
  transaction_status: null,
  resource: null,
  description: null,
  realm: null,
  splits: [],
  approvals: [],
  approvals_needed: 1,
  ...a,
});

export const approval = (a: Partial<ApprovalFromAPI> = {}): Approval => toApproval(approvalFromAPI(a));

/** transactionFromAPI is a confirmed transaction as the API sends it, with t's fields. */
export const transactionFromAPI = (t: Partial<TransactionFromAPI> = {}): TransactionFromAPI => ({
  id: 't1',
  wallet_id: WALLET_ID,
  direction: 'send',
  kind: 'usdc',
  asset: 'USDC',
  amount: 1.5,
  counterparty: ADDRESS,
  memo: null,
  status: 'confirmed',
  signature: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
  previous_signatures: [],
  attempts: 1,
  fee_lamports: 5000,
  fee_payer: null,
  approval_id: null,
  created_at: '2026-04-01T12:00:00Z',
  ...t,
});

export const transaction = (t: Partial<TransactionFromAPI> = {}): Transaction => toTransaction(transactionFromAPI(t));
