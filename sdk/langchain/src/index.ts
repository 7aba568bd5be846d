// @agentwallet/langchain: the agent wallet's tools for LangChain agents.
// Names and descriptions are the MCP server's (internal/mcpserver); a test
// compares them. Results are compact JSON strings a model can read;
// pending_approval and blocked are results, not errors.
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { AgentWallet, AgentWalletError } from '@agentwallet/sdk';

export const descriptions = {
  send_usdc:
    'Send USDC from an agent wallet on Solana, under the wallet\'s spending policy. ' +
    'Answers status "sent" (signed and broadcast; signature given), "pending_approval" (a human must approve: do not retry, ' +
    'check later with get_approval_status using approval_id), or "blocked" with a reason: exceeds_max_tx (the amount is over the ' +
    'per-payment cap), exceeds_daily_limit (today\'s remaining allowance, remaining_today_usdc, is too small), recipient_not_allowed ' +
    '(the recipient is not on the wallet\'s allowlist), wallet_frozen (a human froze the wallet). Pass the same idempotency_key to ' +
    'retry a send safely: it never pays twice.',
  get_wallet_info:
    'Get an agent wallet: its label, Solana address, state (active or frozen), spending policy ' +
    '(daily_limit_usdc, max_tx_usdc, approval_threshold_usdc, allowlist) and live SOL and USDC balance.',
  list_recent_transactions:
    'List recent USDC transactions, newest first, optionally of one wallet: amount, recipient, ' +
    'status (pending, confirmed, failed), memo, signature and time.',
  preview_send:
    'Check what send_usdc would do now for this payment, without sending: outcome (sent, pending_approval, ' +
    'blocked), the blocking reason if any, and today\'s spent and remaining allowance.',
  get_approval_status:
    'Get the status of a payment waiting for a human: pending (still waiting), sent (approved and sent; ' +
    'signature given), rejected (closed without paying; reason when the system rejected it), expired (nobody decided within 7 days).',
} as const;

const nextForBlock: Record<string, string> = {
  exceeds_max_tx: "the amount is over the wallet's per-payment cap; send less",
  exceeds_daily_limit: "today's allowance is used up (remaining_today_usdc); send at most that, or wait for tomorrow (UTC)",
  recipient_not_allowed: "the recipient is not on the wallet's allowlist; a human must add it",
  wallet_frozen: 'a human froze the wallet; do not retry',
};

export interface ToolkitOptions {
  /** The client, with the agent's API key. */
  client: AgentWallet;
  /** The wallet the tools pay from and read. */
  walletId: string;
  /** The dashboard's origin, for approve_url (default: none). */
  dashboardUrl?: string;
}

/** Errors the service answered become text the model can read. */
async function answer(fn: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await fn());
  } catch (e) {
    if (e instanceof AgentWalletError) return JSON.stringify({ error: e.message, status: e.status });
    throw e;
  }
}

const amount = z.number().positive().describe('USDC to send in whole units, e.g. 1.5 (at most 6 decimals)');

/** agentWalletTools returns every tool, bound to one wallet. */
export function agentWalletTools({ client, walletId, dashboardUrl }: ToolkitOptions) {
  const sendUsdc = tool(
    async ({ to, amount, memo, idempotency_key }) =>
      answer(async () => {
        const r = await client.agents.send(walletId, { to, amount, memo, idempotencyKey: idempotency_key });
        switch (r.status) {
          case 'sent':
            return { status: 'sent', signature: r.signature, idempotency_key: r.idempotencyKey, next: 'sent: it confirms within seconds' };
          case 'pending_approval': {
            const a = await client.approvals.get(r.approvalId);
            return {
              status: 'pending_approval',
              approval_id: r.approvalId,
              expires_at: a.expires_at,
              ...(dashboardUrl ? { approve_url: `${dashboardUrl.replace(/\/$/, '')}/dashboard/approvals/${r.approvalId}` } : {}),
              idempotency_key: r.idempotencyKey,
              next: 'a human must approve this payment: do not retry; check later with get_approval_status',
            };
          }
          case 'blocked':
            return {
              status: 'blocked',
              reason: r.reason,
              remaining_today_usdc: r.remainingTodayUsdc,
              idempotency_key: r.idempotencyKey,
              next: `the policy refused this payment: ${nextForBlock[r.reason] ?? 'do not retry unchanged'}`,
            };
        }
      }),
    {
      name: 'send_usdc',
      description: descriptions.send_usdc,
      schema: z.object({
        to: z.string().min(32).max(44).describe("the recipient's Solana address (base58)"),
        amount,
        memo: z.string().max(200).optional().describe('an optional public note written on-chain'),
        idempotency_key: z.string().max(255).optional().describe('reuse the same key to retry this payment safely'),
      }),
    },
  );
  const walletInfo = tool(
    async () =>
      answer(async () => {
        const a = await client.agents.get(walletId);
        return { id: a.id, label: a.label, address: a.pubkey, state: a.state, policy: a.policy, sol: a.balance?.sol, usdc: a.balance?.usdc };
      }),
    { name: 'get_wallet_info', description: descriptions.get_wallet_info, schema: z.object({}) },
  );
  const recent = tool(
    async ({ limit }) =>
      answer(async () => {
        const out = [];
        for await (const t of client.transactions.list({ walletId, pageSize: limit ?? 10 })) {
          out.push({ amount: t.amount, to: t.counterparty, status: t.status, memo: t.memo ?? undefined, signature: t.signature, at: t.created_at });
          if (out.length >= (limit ?? 10)) break;
        }
        return { transactions: out };
      }),
    {
      name: 'list_recent_transactions',
      description: descriptions.list_recent_transactions,
      schema: z.object({ limit: z.number().int().min(1).max(50).optional().describe('how many, 1 to 50 (default 10)') }),
    },
  );
  const preview = tool(
    async ({ to, amount, memo }) =>
      answer(async () => {
        const p = await client.agents.preview(walletId, { to, amount, memo });
        return {
          outcome: p.outcome,
          ...(p.reason ? { reason: p.reason } : {}),
          spent_today_usdc: p.spent_today_usdc,
          remaining_today_usdc: p.remaining_today_usdc,
          max_tx_usdc: p.max_tx_usdc,
          approval_threshold_usdc: p.approval_threshold_usdc,
        };
      }),
    {
      name: 'preview_send',
      description: descriptions.preview_send,
      schema: z.object({
        to: z.string().min(32).max(44).describe("the recipient's Solana address (base58)"),
        amount,
        memo: z.string().max(200).optional(),
      }),
    },
  );
  const approval = tool(
    async ({ approval_id }) =>
      answer(async () => {
        const a = await client.approvals.get(approval_id);
        const next =
          a.status === 'pending' || a.status === 'signing'
            ? 'a human has not decided yet: check again later; do not send the payment again'
            : a.status === 'sent'
              ? 'the payment was approved and sent'
              : 'the payment was not made; a new send_usdc would ask again';
        return {
          approval_id: a.id,
          status: a.status,
          ...(a.signature ? { signature: a.signature } : {}),
          ...(a.reason_detail || a.reason ? { reason: a.reason_detail ?? a.reason } : {}),
          ...(a.transaction_status ? { transaction_status: a.transaction_status } : {}),
          expires_at: a.expires_at,
          next,
        };
      }),
    {
      name: 'get_approval_status',
      description: descriptions.get_approval_status,
      schema: z.object({ approval_id: z.string().describe("the approval's id (ap_…), from send_usdc") }),
    },
  );
  return [sendUsdc, walletInfo, recent, preview, approval];
}
