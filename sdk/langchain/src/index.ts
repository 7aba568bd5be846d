// @agentwallet/langchain: the agent wallet's tools for LangChain agents.
// Names and descriptions are the MCP server's (internal/mcpserver); a test
// compares them. Results are compact JSON strings a model can read;
// pending_approval and blocked are results, not errors. x402_fetch and
// pay_fetch fetch through the SDK's payFetch (x402 only, or either
// protocol).
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import {
  AgentWallet,
  AgentWalletError,
  ChallengePaidError,
  PaymentBlockedError,
  PaymentChallengeError,
  type PayFetchOptions,
} from '@agentwallet/sdk';

export const descriptions = {
  send_usdc:
    'Send USDC from an agent wallet on Solana, or another stablecoin its policy lists (asset: USDT, PYUSD, USDG ' +
    'or EURC; get_wallet_info shows policy.assets), under the wallet\'s spending policy: USD stablecoins count together under its ' +
    '_usdc limits, EURC under its _eur limits. ' +
    'Answers status "sent" (signed and broadcast; signature given), "pending_approval" (a human must approve: do not retry, ' +
    'check later with get_approval_status using approval_id), or "blocked" with a reason: exceeds_max_tx (the amount is over the ' +
    'per-payment cap), exceeds_daily_limit (today\'s remaining allowance, remaining_today_usdc, or remaining_today_eur for a EUR ' +
    'stablecoin, is too small), asset_not_allowed (the wallet\'s policy does not list the asset), recipient_not_allowed ' +
    '(the recipient is not on the wallet\'s allowlist), wallet_frozen (a human froze the wallet), exceeds_weekly_limit or ' +
    'exceeds_monthly_limit (the last 7 or 30 days\' total is at the wallet\'s limit), exceeds_velocity (the wallet made as many ' +
    'payments in the last hour or 24 hours as its policy allows), outside_active_hours (the wallet may only pay during its ' +
    'active hours; outside them a payment may also be parked for a human). Pass the same idempotency_key to ' +
    'retry a send safely: it never pays twice.',
  get_wallet_info:
    'Get an agent wallet: its label, Solana address, state (active or frozen), spending policy ' +
    '(assets: the stablecoins it may spend; daily_limit_usdc, max_tx_usdc, approval_threshold_usdc for USD stablecoins, ' +
    'daily_limit_eur, max_tx_eur, approval_threshold_eur for EUR ones (absent: no EUR spending), allowlist, and when set ' +
    'weekly_limit_usdc, monthly_limit_usdc, weekly_limit_eur, monthly_limit_eur, ' +
    'max_tx_per_hour, max_tx_per_day, active_hours with outside_active_hours; approvals_required: how many people approve a payment ' +
    'that waits for a human) and live balance: sol, usdc, and assets (each stablecoin the wallet holds, with its amount).',
  list_recent_transactions:
    'List recent transactions, newest first, optionally of one wallet, one direction and one asset: payments out ' +
    '(direction send, the recipient in to) and deposits, money that came into the wallet from anyone (direction receive, the ' +
    'sender in from). Each has asset (the stablecoin\'s symbol in lower case: usdc, usdt, pyusd, usdg, eurc; or sol: a deposit may ' +
    'be SOL) and amount in that asset, status (pending, confirmed, ' +
    'failed; a deposit is listed once confirmed, and failed if the chain dropped it), memo, signature and time.',
  get_balance_history:
    'Get an agent wallet\'s balance of one asset over time (asset: USDC by default, USDT, PYUSD, USDG, EURC, SOL, or all for ' +
    'a series of each), from its ledger of every change (payments out with their fees, deposits): the balance at one instant (at), or ' +
    'one point per day or hour (interval) from from to to (default: the last 30 days), each in whole units of its asset. Shows when ' +
    'money came in or went out; get_wallet_info has the live balance.',
  preview_send:
    'Check what send_usdc would do now for this payment (in asset, USDC by default), without sending: outcome ' +
    '(sent, pending_approval, blocked), the blocking reason if any, the policy rule that decides (rule), today\'s spent and ' +
    'remaining allowance (in the payment\'s currency: the _eur figures for a EUR stablecoin), ' +
    'the week\'s and month\'s when the wallet limits them, the payments made in the last hour and 24 hours, and whether ' +
    'now is within the wallet\'s active hours.',
  get_approval_status:
    'Get the status of a payment waiting for a human (its amount and asset): pending (still waiting), sent (approved and sent; ' +
    'signature given), rejected (closed without paying; reason when the system rejected it), expired (nobody decided within 7 days); ' +
    'approvals (who approved so far) and approvals_needed (how many people must approve before it is sent).',
  x402_fetch:
    'Fetch a URL and pay for it from an agent wallet if it asks (HTTP 402 with an x402 challenge on Solana in USDC or another stablecoin the wallet\'s policy lists), under the ' +
    'wallet\'s spending policy. Answers the HTTP status, content_type and text of the response (the first 64 KiB; truncated says ' +
    'when more was cut) and payment: null when nothing was paid; status "paid" with amount, pay_to and the settlement transaction; ' +
    '"pending_approval" (a human must approve: once approved, call again with approval_id; do not retry before); or "blocked" ' +
    'with a reason (exceeds_max_tx, exceeds_daily_limit, exceeds_weekly_limit, exceeds_monthly_limit, exceeds_velocity, ' +
    'outside_active_hours, asset_not_allowed, recipient_not_allowed, wallet_frozen). Set max_usdc to cap the price (in whole units ' +
    'of the asset paid: a dollar or a euro).',
  pay_fetch:
    'Fetch a URL and pay for it from an agent wallet if it asks (HTTP 402), in either protocol a seller may ask in: MPP ' +
    '(the Payment HTTP authentication scheme\'s Solana charge) or x402, on Solana in USDC or another stablecoin the wallet\'s policy lists, ' +
    'under the wallet\'s spending policy. A seller that offers both is paid once, never twice: by prefer (mpp or x402; default mpp ' +
    'unless the operator chose otherwise), and by the other only when the preferred one cannot be paid. Answers the HTTP status, ' +
    'content_type and text of the response (the first 64 KiB; truncated says when more was cut) and payment: null when nothing was ' +
    'paid; status "paid" with protocol, amount, asset, pay_to and the settled transaction; "pending_approval" (a human must approve: ' +
    'once approved, call again with approval_id; do not retry before); or "blocked" with a reason (exceeds_max_tx, exceeds_daily_limit, ' +
    'exceeds_weekly_limit, exceeds_monthly_limit, exceeds_velocity, outside_active_hours, asset_not_allowed, recipient_not_allowed, ' +
    'wallet_frozen); or "already_paid" (the seller asked again for a challenge this account paid before: nothing more was paid, ' +
    'in neither protocol; payment_id and state name the earlier payment; do not retry). Set max_usdc to cap the price (in whole ' +
    'units of the asset paid: a dollar or a euro).',
} as const;

/** What pay_fetch tells a model when the seller asked again for a challenge already paid. */
const ALREADY_PAID_NEXT =
  'the seller asked again for a challenge this account already paid: nothing more was paid; do not retry, ' +
  'report the earlier payment (the seller should give what it sold for it, or a fresh challenge)';

/** The most response text x402_fetch hands a model. */
export const X402_TEXT_LIMIT = 64 << 10;

const nextForBlock: Record<string, string> = {
  exceeds_max_tx: "the amount is over the wallet's per-payment cap; send less",
  exceeds_daily_limit:
    "today's allowance is used up (remaining_today_usdc, or remaining_today_eur for a EUR stablecoin); send at most that, or wait for tomorrow (UTC)",
  asset_not_allowed: "the wallet's policy does not list this asset (get_wallet_info shows policy.assets); pay in one it lists, or a human must add it",
  recipient_not_allowed: "the recipient is not on the wallet's allowlist; a human must add it",
  wallet_frozen: 'a human froze the wallet; do not retry',
  exceeds_weekly_limit: "the last 7 days' allowance is used up; send less (preview_send shows what remains) or wait",
  exceeds_monthly_limit: "the last 30 days' allowance is used up; send less (preview_send shows what remains) or wait",
  exceeds_velocity: 'the wallet has made as many payments as its policy allows in the last hour or day; wait before paying again',
  outside_active_hours: 'the wallet may only pay during its active hours (get_wallet_info shows them); try again within them',
};

export interface ToolkitOptions {
  /** The client, with the agent's API key. */
  client: AgentWallet;
  /** The wallet the tools pay from and read. */
  walletId: string;
  /** The dashboard's origin, for approve_url (default: none). */
  dashboardUrl?: string;
  /** The protocol pay_fetch pays when a seller offers both and the call does not say (default mpp). */
  payPreference?: 'mpp' | 'x402';
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

const amount = z.number().positive().describe('how much to send in whole units of asset, e.g. 1.5 (at most 6 decimals)');
const asset = z
  .string()
  .max(10)
  .optional()
  .describe("optional: the stablecoin to send, USDC (default), USDT, PYUSD, USDG or EURC; the wallet's policy must list it");

/** agentWalletTools returns every tool, bound to one wallet. */
export function agentWalletTools({ client, walletId, dashboardUrl, payPreference }: ToolkitOptions) {
  const sendUsdc = tool(
    async ({ to, amount, asset, memo, idempotency_key }) =>
      answer(async () => {
        const symbol = (asset ?? 'USDC').toUpperCase();
        const r = await client.agents.send(walletId, { to, amount, asset: symbol, memo, idempotencyKey: idempotency_key });
        switch (r.status) {
          case 'sent':
            return {
              status: 'sent',
              asset: symbol,
              signature: r.signature,
              idempotency_key: r.idempotencyKey,
              next: 'sent: it confirms within seconds',
            };
          case 'pending_approval': {
            const a = await client.approvals.get(r.approvalId);
            return {
              status: 'pending_approval',
              asset: symbol,
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
              asset: symbol,
              reason: r.reason,
              ...(r.currency === 'EUR' ? { remaining_today_eur: r.remainingTodayEur } : { remaining_today_usdc: r.remainingTodayUsdc }),
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
        asset,
        memo: z.string().max(200).optional().describe('an optional public note written on-chain'),
        idempotency_key: z.string().max(255).optional().describe('reuse the same key to retry this payment safely'),
      }),
    },
  );
  const walletInfo = tool(
    async () =>
      answer(async () => {
        const a = await client.agents.get(walletId);
        return {
          id: a.id,
          label: a.label,
          address: a.pubkey,
          state: a.state,
          policy: a.policy,
          sol: a.balance?.sol,
          usdc: a.balance?.usdc,
          assets: a.balance?.assets.map((h) => ({ symbol: h.symbol, amount: h.amount })),
        };
      }),
    { name: 'get_wallet_info', description: descriptions.get_wallet_info, schema: z.object({}) },
  );
  const recent = tool(
    async ({ limit, direction, asset }) =>
      answer(async () => {
        const out = [];
        const filter = { walletId, pageSize: limit ?? 10, ...(direction ? { direction } : {}), ...(asset ? { asset } : {}) };
        for await (const t of client.transactions.list(filter)) {
          out.push({
            direction: t.direction,
            asset: t.asset.toLowerCase(),
            amount: t.amount,
            ...(t.direction === 'receive' ? { from: t.counterparty } : { to: t.counterparty }),
            status: t.status,
            memo: t.memo ?? undefined,
            signature: t.signature,
            at: t.created_at,
          });
          if (out.length >= (limit ?? 10)) break;
        }
        return { transactions: out };
      }),
    {
      name: 'list_recent_transactions',
      description: descriptions.list_recent_transactions,
      schema: z.object({
        direction: z
          .enum(['send', 'receive'])
          .optional()
          .describe('send (payments out) or receive (deposits: money that came in); both when omitted'),
        asset: z.string().max(10).optional().describe("only this asset's: usdc, usdt, pyusd, usdg, eurc or sol (any case); every asset when omitted"),
        limit: z.number().int().min(1).max(50).optional().describe('how many, 1 to 50 (default 10)'),
      }),
    },
  );
  const history = tool(
    async ({ asset, at, from, to, interval }) =>
      answer(async () => {
        const h = await client.wallets.balanceHistory(walletId, {
          ...(asset ? { asset } : {}),
          ...(at ? { at } : { ...(from ? { from } : {}), ...(to ? { to } : {}), ...(interval ? { interval } : {}) }),
        });
        return { wallet_id: h.wallet_id, series: h.series };
      }),
    {
      name: 'get_balance_history',
      description: descriptions.get_balance_history,
      schema: z.object({
        asset: z
          .string()
          .max(10)
          .optional()
          .describe('USDC (default), another stablecoin (USDT, PYUSD, USDG, EURC), SOL, or all for a series of each'),
        at: z.string().optional().describe('one instant (ISO 8601, e.g. 2026-04-15T12:00:00Z): the balance then; leave from, to and interval out'),
        from: z.string().optional().describe('the first instant (ISO 8601); default: 30 intervals before to'),
        to: z.string().optional().describe('the last instant (ISO 8601); default: now'),
        interval: z.enum(['day', 'hour']).optional().describe('the step between points (default day; at most 1,000 points)'),
      }),
    },
  );
  const preview = tool(
    async ({ to, amount, asset, memo }) =>
      answer(async () => {
        const p = await client.agents.preview(walletId, { to, amount, ...(asset ? { asset } : {}), memo });
        return {
          outcome: p.outcome,
          ...(p.reason ? { reason: p.reason } : {}),
          ...(p.rule ? { rule: p.rule } : {}),
          asset: p.asset,
          currency: p.currency,
          ...(p.currency === 'EUR' ? { spent_today_eur: p.spent_today_eur, remaining_today_eur: p.remaining_today_eur } : {}),
          spent_today_usdc: p.spent_today_usdc,
          remaining_today_usdc: p.remaining_today_usdc,
          max_tx_usdc: p.max_tx_usdc,
          approval_threshold_usdc: p.approval_threshold_usdc,
          ...(p.remaining_week_usdc != null ? { remaining_week_usdc: p.remaining_week_usdc } : {}),
          ...(p.remaining_month_usdc != null ? { remaining_month_usdc: p.remaining_month_usdc } : {}),
          payments_last_hour: p.payments_last_hour,
          ...(p.max_tx_per_hour != null ? { max_tx_per_hour: p.max_tx_per_hour } : {}),
          payments_last_day: p.payments_last_day,
          ...(p.max_tx_per_day != null ? { max_tx_per_day: p.max_tx_per_day } : {}),
          ...(p.within_active_hours != null ? { within_active_hours: p.within_active_hours } : {}),
        };
      }),
    {
      name: 'preview_send',
      description: descriptions.preview_send,
      schema: z.object({
        to: z.string().min(32).max(44).describe("the recipient's Solana address (base58)"),
        amount,
        asset: z.string().max(10).optional().describe('optional: the stablecoin, USDC (default), USDT, PYUSD, USDG or EURC'),
        memo: z.string().max(200).optional(),
      }),
    },
  );
  const approval = tool(
    async ({ approval_id }) =>
      answer(async () => {
        const a = await client.approvals.get(approval_id);
        const next =
          a.status === 'pending' && a.approvals_needed > 1
            ? `${a.approvals.length} of ${a.approvals_needed} people have approved; the others have not decided yet: check again later; do not send the payment again`
            : a.status === 'pending' || a.status === 'signing'
            ? 'a human has not decided yet: check again later; do not send the payment again'
            : a.status === 'sent'
              ? 'the payment was approved and sent'
              : 'the payment was not made; a new send_usdc would ask again';
        return {
          approval_id: a.id,
          status: a.status,
          amount: a.amount,
          asset: a.asset,
          ...(a.signature ? { signature: a.signature } : {}),
          ...(a.reason_detail || a.reason ? { reason: a.reason_detail ?? a.reason } : {}),
          ...(a.transaction_status ? { transaction_status: a.transaction_status } : {}),
          expires_at: a.expires_at,
          approvals: a.approvals.map((v) => ({ by: v.by, at: v.at, ...(v.note ? { note: v.note } : {}) })),
          approvals_needed: a.approvals_needed,
          next,
        };
      }),
    {
      name: 'get_approval_status',
      description: descriptions.get_approval_status,
      schema: z.object({ approval_id: z.string().describe("the approval's id (ap_…), from send_usdc") }),
    },
  );
  /**
   * x402_fetch and pay_fetch: fetch the URL with client.payFetch (x402
   * only, or either protocol by preference) and answer what a model reads.
   */
  const fetchPaying = async (
    name: 'x402_fetch' | 'pay_fetch',
    args: { wallet_id?: string; url: string; method?: string; body?: string; max_usdc?: number; approval_id?: string },
    protocols: Pick<PayFetchOptions, 'prefer' | 'only'>,
  ) => {
    try {
      const { response, payment } = await client.payFetch(
        args.url,
        { method: args.method ?? 'GET', ...(args.body !== undefined ? { body: args.body } : {}) },
        {
          walletId: args.wallet_id ?? walletId,
          ...protocols,
          ...(args.max_usdc !== undefined ? { maxUsdc: args.max_usdc } : {}),
          ...(args.approval_id ? { approvalId: args.approval_id } : {}),
        },
      );
      if (payment?.status === 'pending_approval') {
        await response.body?.cancel();
        return {
          status: 402,
          payment: {
            status: 'pending_approval',
            ...(name === 'pay_fetch' ? { protocol: payment.protocol } : {}),
            approval_id: payment.approvalId,
            ...(dashboardUrl ? { approve_url: `${dashboardUrl.replace(/\/$/, '')}/dashboard/approvals/${payment.approvalId}` } : {}),
          },
          next: `the seller asked for payment, at or over the approval threshold: a human must approve; once approved call ${name} again with approval_id`,
        };
      }
      const { text, truncated } = await boundedText(response, X402_TEXT_LIMIT);
      const transaction = payment?.settlement?.transaction ?? payment?.receipt?.reference;
      return {
        status: response.status,
        content_type: response.headers.get('content-type') ?? '',
        text,
        truncated,
        payment: payment
          ? {
              status: 'paid',
              ...(name === 'pay_fetch' ? { protocol: payment.protocol } : {}),
              payment_id: payment.paymentId,
              amount: payment.amount,
              ...(payment.asset ? { asset: payment.asset } : {}),
              pay_to: payment.payTo,
              network: payment.network,
              ...(transaction ? { transaction } : {}),
              settled: payment.settlement?.success ?? payment.receipt?.status === 'success',
            }
          : null,
        next: payment && response.status === 402 ? 'the seller refused the payment: do not retry unchanged' : 'done',
      };
    } catch (e) {
      if (e instanceof PaymentBlockedError)
        return {
          status: 402,
          payment: { status: 'blocked', ...(name === 'pay_fetch' && e.protocol ? { protocol: e.protocol } : {}), reason: e.reason },
          next: `the policy refused this payment: ${nextForBlock[e.reason] ?? 'do not retry unchanged'}`,
        };
      if (e instanceof ChallengePaidError) return { status: 402, payment: await earlierPayment(e), next: ALREADY_PAID_NEXT };
      if (e instanceof PaymentChallengeError) return { error: e.message, status: 402 };
      throw e;
    }
  };
  /**
   * The payment a ChallengePaidError names, as the service reads it (state,
   * amount, recipient, transaction), or only its id when it cannot be read;
   * no id when a wallet out of the key's reach paid it.
   */
  const earlierPayment = async (e: ChallengePaidError) => {
    const out = {
      status: 'already_paid',
      ...(e.protocol ? { protocol: e.protocol } : {}),
      ...(e.paymentId ? { payment_id: e.paymentId } : {}),
    };
    if (!e.paymentId || e.protocol !== 'mpp') return out;
    try {
      const p = await client.mpp.payments.get(e.paymentId);
      const transaction = p.signature ?? p.receipt?.reference;
      return {
        ...out,
        state: p.state,
        amount: p.amount,
        asset: p.asset,
        pay_to: p.pay_to,
        network: p.network,
        ...(transaction ? { transaction } : {}),
        settled: p.state === 'settled',
      };
    } catch {
      return out;
    }
  };
  const fetchArgs = {
    wallet_id: z.string().optional().describe("the paying agent wallet's id (UUID); the toolkit's wallet when omitted"),
    url: z.string().url().describe('the http(s) URL to fetch'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional().describe('the HTTP method (default GET)'),
    body: z.string().max(65536).optional().describe('the request body, e.g. JSON text'),
    max_usdc: z
      .number()
      .positive()
      .optional()
      .describe('the most to pay for this request, in whole units of the asset paid (USDC unless the wallet pays in another stablecoin)'),
    approval_id: z.string().optional().describe('after a human approved a pending payment: its approval id (ap_…)'),
  };
  const x402Fetch = tool(async (args) => answer(() => fetchPaying('x402_fetch', args, { only: 'x402' })), {
    name: 'x402_fetch',
    description: descriptions.x402_fetch,
    schema: z.object(fetchArgs),
  });
  const payFetch = tool(
    async ({ prefer, ...args }) => answer(() => fetchPaying('pay_fetch', args, { prefer: prefer ?? payPreference ?? 'mpp' })),
    {
      name: 'pay_fetch',
      description: descriptions.pay_fetch,
      schema: z.object({
        ...fetchArgs,
        prefer: z
          .enum(['mpp', 'x402'])
          .optional()
          .describe("the protocol to pay when the seller offers both: mpp or x402 (default: the operator's choice, mpp unless set)"),
      }),
    },
  );
  return [sendUsdc, walletInfo, recent, history, preview, approval, x402Fetch, payFetch];
}

/** The response's text up to limit bytes (UTF-8), the rest cancelled unread. */
async function boundedText(res: Response, limit: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > limit) {
      chunks.push(value.subarray(0, limit - size));
      size = limit;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  // A cut inside a multi-byte character decodes to U+FFFD, not an error.
  return { text: new TextDecoder().decode(all), truncated };
}
