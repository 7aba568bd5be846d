// Approvals: the payments parked for a person's decision, what approving
// would do now (the context), and the decisions.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call, date } from './api';
import { poll } from './queryClient';

export type ApprovalFromAPI = Schemas['Approval'];
export type VoteFromAPI = Schemas['ApprovalVote'];
export type ApprovalContextFromAPI = Schemas['ApprovalContext'];

/** Split is one further recipient of an MPP charge and its share, in whole units of the charge's asset. */
export type Split = Schemas['MPPSplit'];

/** Vote is one person's approve of an approval that needs several. */
export interface Vote {
  /** Who approved: user:<address>, key_…, slack:<member>. */
  by: string;
  /** The person behind a key or a Slack member, when known (user:<address>). */
  person: string | null;
  at: Date;
  note: string | null;
}

/** Approval is an approval as the pages read it. */
export interface Approval {
  id: string;
  walletId: string;
  agentLabel: string;
  kind: ApprovalFromAPI['kind'];
  /** In whole units of asset. */
  amount: number;
  /** What it pays: a symbol of GET /assets (USDC, PYUSD, EURC, …). */
  asset: string;
  to: string;
  memo: string | null;
  status: ApprovalFromAPI['status'];
  reason: ApprovalFromAPI['reason'];
  reasonDetail: string | null;
  signature: string | null;
  requestedBy: string | null;
  approvedBy: string | null;
  rejectedBy: string | null;
  note: string | null;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  transactionStatus: ApprovalFromAPI['transaction_status'];
  /** For an x402 or MPP payment: the URL paid for. */
  resource: string | null;
  /** For an x402 or MPP payment: the seller's description of it. */
  description: string | null;
  /** For an MPP charge: the seller as its challenge names itself. */
  realm: string | null;
  /** For an MPP charge: its further recipients and their shares (amount is the total, to gets the rest). */
  splits: Split[];
  approvals: Vote[];
  approvalsNeeded: number;
}

export const toApproval = (a: ApprovalFromAPI): Approval => ({
  id: a.id,
  walletId: a.wallet_id,
  agentLabel: a.agent_label,
  kind: a.kind,
  amount: a.amount,
  asset: a.asset,
  to: a.to,
  memo: a.memo,
  status: a.status,
  reason: a.reason,
  reasonDetail: a.reason_detail,
  signature: a.signature,
  requestedBy: a.requested_by,
  approvedBy: a.approved_by,
  rejectedBy: a.rejected_by,
  note: a.note,
  createdAt: date(a.created_at),
  expiresAt: date(a.expires_at),
  decidedAt: date(a.decided_at),
  transactionStatus: a.transaction_status,
  resource: a.resource,
  description: a.description,
  realm: a.realm,
  splits: a.splits.map((s) => ({ to: s.to, amount: s.amount })),
  approvals: a.approvals.map((v) => ({ by: v.by, person: v.person, at: date(v.at), note: v.note })),
  approvalsNeeded: a.approvals_needed,
});

/** ApprovalContext is what a person deciding sees beside the approval: the recipient, the wallet, what approving does now, the webhook. */
export interface ApprovalContext {
  ifApprovedNow: {
    outcome: 'sent' | 'blocked';
    reason: Schemas['ApprovalContextIfApprovedNowStruct']['reason'];
    remainingTodayUsdc: number;
    remainingTodayAfterUsdc: number;
    /** For a payment in a EUR stablecoin, the EUR day's figures; else null. */
    remainingTodayEur: number | null;
    remainingTodayAfterEur: number | null;
  };
  recipient: { address: string; allowlistEmpty: boolean; firstPayment: boolean; label: string | null; onAllowlist: boolean };
  requester: { id: string; label: string | null; prefix: string | null };
  wallet: { id: string; label: string; pubkey: string; state: 'active' | 'frozen'; createdAt: Date };
  webhook: {
    deliveries: {
      deliveryId: string;
      endpointId: string;
      format: 'json' | 'slack';
      status: 'pending' | 'succeeded' | 'failed';
      url: string;
      attempts: number;
    }[];
    /** The approval.pending event as endpoints got it (JSON), or null when none was sent. */
    event: Record<string, unknown> | null;
  };
}

export const toApprovalContext = (c: ApprovalContextFromAPI): ApprovalContext => ({
  ifApprovedNow: {
    outcome: c.if_approved_now.outcome,
    reason: c.if_approved_now.reason,
    remainingTodayUsdc: c.if_approved_now.remaining_today_usdc,
    remainingTodayAfterUsdc: c.if_approved_now.remaining_today_after_usdc,
    remainingTodayEur: c.if_approved_now.remaining_today_eur,
    remainingTodayAfterEur: c.if_approved_now.remaining_today_after_eur,
  },
  recipient: {
    address: c.recipient.address,
    allowlistEmpty: c.recipient.allowlist_empty,
    firstPayment: c.recipient.first_payment,
    label: c.recipient.label,
    onAllowlist: c.recipient.on_allowlist,
  },
  requester: { id: c.requester.id, label: c.requester.label, prefix: c.requester.prefix },
  wallet: { id: c.wallet.id, label: c.wallet.label, pubkey: c.wallet.pubkey, state: c.wallet.state, createdAt: date(c.wallet.created_at) },
  webhook: {
    deliveries: c.webhook.deliveries.map((d) => ({
      deliveryId: d.delivery_id,
      endpointId: d.endpoint_id,
      format: d.format,
      status: d.status,
      url: d.url,
      attempts: d.attempts,
    })),
    event: c.webhook.event,
  },
});

/**
 * approvalKeys name the approvals' reads. approvalKeys.all (the inbox, pending
 * and decided) and approvalKeys.details (each approval's page) are families
 * to invalidate.
 */
export const approvalKeys = {
  all: ['approvals'] as const,
  pending: () => ['approvals', 'pending'] as const,
  decided: () => ['approvals', 'decided'] as const,
  details: ['approval'] as const,
  detail: (id: string) => ['approval', id] as const,
};

const approvalPath = (id: string) => `${API}/approvals/${encodeURIComponent(id)}`;

/** listApprovals is the newest 50 approvals, of one status or all. */
export async function listApprovals(status: ApprovalFromAPI['status'] | undefined, signal?: AbortSignal): Promise<Approval[]> {
  const q = new URLSearchParams({ limit: '50' });
  if (status) q.set('status', status);
  const r = await call<{ approvals: ApprovalFromAPI[] }>('GET', `${API}/approvals?${q}`, undefined, signal);
  return r.approvals.map(toApproval);
}

/** listWalletApprovals is a wallet's latest 20 approvals, newest first. */
export async function listWalletApprovals(walletID: string, signal?: AbortSignal): Promise<Approval[]> {
  const q = new URLSearchParams({ wallet_id: walletID, limit: '20' });
  const r = await call<{ approvals: ApprovalFromAPI[] }>('GET', `${API}/approvals?${q}`, undefined, signal);
  return r.approvals.map(toApproval);
}

/** pendingApprovalsQuery keeps the pending approvals fresh: the inbox, its count in the navigation, the overview. */
export const pendingApprovalsQuery = () =>
  queryOptions({
    queryKey: approvalKeys.pending(),
    queryFn: ({ signal }) => listApprovals('pending', signal),
    ...poll(),
  });

/** decidedApprovalsQuery is the inbox's other tab: the newest approvals already decided. */
export const decidedApprovalsQuery = () =>
  queryOptions({
    queryKey: approvalKeys.decided(),
    queryFn: async ({ signal }) => (await listApprovals(undefined, signal)).filter((a) => a.status !== 'pending'),
    ...poll(),
  });

/** ApprovalRead is an approval with its context, and when (Date.now()) they were read: the page's clock. */
export type ApprovalRead = { approval: Approval; context: ApprovalContext; at: number };

/** approvalQuery reads an approval and its context together, polled while shown. */
export const approvalQuery = (id: string) =>
  queryOptions({
    queryKey: approvalKeys.detail(id),
    queryFn: async ({ signal }): Promise<ApprovalRead> => {
      const [approval, context] = await Promise.all([
        call<ApprovalFromAPI>('GET', approvalPath(id), undefined, signal).then(toApproval),
        call<ApprovalContextFromAPI>('GET', `${approvalPath(id)}/context`, undefined, signal).then(toApprovalContext),
      ]);
      return { approval, context, at: Date.now() };
    },
    ...poll(),
  });

/** approve approves (or votes for) an approval; the answer is the approval as it is now. */
export const approve = (id: string, note: string) =>
  call<ApprovalFromAPI>('POST', `${approvalPath(id)}/approve`, note ? { note } : {}).then(toApproval);

/** reject rejects an approval: nothing is sent. */
export const reject = (id: string, note: string) =>
  call<ApprovalFromAPI>('POST', `${approvalPath(id)}/reject`, note ? { note } : {}).then(toApproval);
