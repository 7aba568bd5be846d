// @agentwallet/sdk: a client of the agent wallet service's public REST API
// (types generated from openapi/openapi.yaml), with send outcomes as
// values, typed errors, retries that never pay twice, cursor lists as
// async iterators and webhook verification.
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';
import { AgentWalletError, ConflictError, PermissionError, ServiceUnavailableError, ValidationError, errorFor } from './errors.js';
import {
  carriesPayment,
  PaymentChallengeError,
  protocolOrder,
  readOffers,
  type FetchPayment,
  type MPPPayment,
  type MPPPayOptions,
  type PayFetchOptions,
  type PayFetchResult,
  type PayProtocol,
} from './payfetch.js';
import {
  ApprovalPendingError,
  readSettlement,
  replayable,
  X402ChallengeError,
  type X402FetchOptions,
  type X402FetchResult,
  type X402Payment,
} from './x402.js';

export * from './errors.js';
export * from './payfetch.js';
export * from './webhooks.js';
export * from './x402.js';
export type { components, paths } from './schema.js';

type Schemas = components['schemas'];
export type Agent = Schemas['Agent'];
export type Wallet = Schemas['Wallet'];
export type Balance = Schemas['Balance'];
export type Policy = Schemas['Policy'];
export type PolicyInput = Schemas['PolicyInput'];
export type Transaction = Schemas['Transaction'];
export type Approval = Schemas['Approval'];
export type ApprovalContext = Schemas['ApprovalContext'];
export type Preview = Schemas['PreviewOutputBody'];
export type AuditEntry = Schemas['AuditEntry'];
export type AuditVerification = Schemas['AuditVerificationOutputBody'];
export type Analytics = Schemas['AnalyticsOutputBody'];
/** Deposits of a day, wallet and asset (Analytics' received). */
export type ReceivedDay = Schemas['ReceivedDay'];
export type BalanceHistory = Schemas['HistoryOutputBody'];
export type BalanceSeries = Schemas['BalanceSeries'];
export type BalancePoint = Schemas['BalancePoint'];
/**
 * Money of a wallet that moved without the service: an unexplained_outflow
 * (it left in a transaction the service did not make: signature and to say
 * which and where), or a snapshot (the daily comparison found the chain's
 * balance, chain, apart from the ledger's, ledger). amount is signed, in
 * whole units of asset.
 */
export type BalanceDifference = Schemas['BalanceDifference'];
export type Key = Schemas['Key'];
export type NewKey = Schemas['NewKey'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['EndpointWithSecret'];
export type Delivery = Schemas['DeliveryOut'];
export type User = Schemas['UserOut'];
export type X402PaymentRecord = Schemas['X402Payment'];
/** An MPP payment as the service keeps it: its state follows the chain; signature once settled, receipt once reported. */
export type MPPPaymentRecord = Schemas['MPPPayment'];
/** A token of the network (assets.list): symbol, mint, token program, decimals, the currency it is pegged to. */
export type Asset = Schemas['AssetOut'];
/** A wallet's holding of one asset (Balance's assets), in the asset's units. */
export type AssetBalance = Schemas['AssetBalance'];
/**
 * An asset's symbol: the service's stablecoins, or one an operator added
 * (any case is accepted).
 */
export type AssetSymbol = 'USDC' | 'USDT' | 'PYUSD' | 'USDG' | 'EURC' | (string & {});
export type BlockReason =
  | 'exceeds_max_tx'
  | 'exceeds_daily_limit'
  | 'exceeds_weekly_limit'
  | 'exceeds_monthly_limit'
  | 'exceeds_velocity'
  | 'outside_active_hours'
  | 'recipient_not_allowed'
  | 'asset_not_allowed'
  | 'wallet_frozen';
/** When a wallet's agent may pay (a policy's active_hours). */
export type ActiveHours = NonNullable<Policy['active_hours']>;

/**
 * What a send did: sent, parked for a human, or blocked by the policy. A
 * block says what today still allows in the payment's currency:
 * remainingTodayUsdc for a USD stablecoin (USDC, USDT, PYUSD, USDG share
 * the USD day), remainingTodayEur for a EUR one (EURC; remainingTodayUsdc
 * is then 0: the answer does not carry it).
 */
export type SendResult =
  | { status: 'sent'; signature: string; idempotencyKey: string; replayed: boolean; transactionStatus?: 'pending' | 'confirmed' | 'failed' }
  | { status: 'pending_approval'; approvalId: string; idempotencyKey: string; replayed: boolean }
  | {
      status: 'blocked';
      reason: BlockReason;
      currency: 'USD' | 'EUR';
      remainingTodayUsdc: number;
      remainingTodayEur?: number;
      idempotencyKey: string;
      replayed: boolean;
    };

export interface SendInput {
  to: string;
  /** Whole units of asset (USDC unless asset says otherwise), at most 6 decimals. */
  amount: number;
  /** The asset to send: a symbol of assets.list (default USDC). The wallet's policy must list it, else a block asset_not_allowed. */
  asset?: AssetSymbol;
  memo?: string;
  /** Makes retries safe; one is made when omitted (and returned in the result). */
  idempotencyKey?: string;
}

export interface AgentWalletOptions {
  apiKey: string;
  /** The service (e.g. https://wallet.example.com); /api/public/v1 is added. Default http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Retries of 429 (after Retry-After), 502, 503 and network failures. Default 3. */
  maxRetries?: number;
  /** A fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
}

const PREFIX = '/api/public/v1';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The methods that may be retried: reads, and writes that carry an Idempotency-Key. */
function retryable(req: Request): boolean {
  return req.method === 'GET' || req.headers.has('Idempotency-Key');
}

/** 403 from an x402 or MPP payment: the wallet's policy refused it; `reason` names the rule, `protocol` the payment's. */
export class PaymentBlockedError extends PermissionError {
  override name = 'PaymentBlockedError';
  constructor(
    message: string,
    status: number,
    requestId: string | undefined,
    readonly reason: BlockReason,
    readonly protocol?: PayProtocol,
  ) {
    super(message, status, requestId);
  }
}

/**
 * 409 from an MPP payment: this account already paid the seller's challenge
 * (reason `already_paid`), by whichever of its wallets; nothing was signed.
 * `paymentId` is that earlier payment (`mpp.payments.get`), absent when a
 * wallet out of the key's reach paid it.
 */
export class ChallengePaidError extends ConflictError {
  override name = 'ChallengePaidError';
  readonly reason = 'already_paid';
  constructor(
    message: string,
    status: number,
    requestId: string | undefined,
    readonly paymentId?: string,
    readonly protocol?: PayProtocol,
  ) {
    super(message, status, requestId);
  }
}

/** The pay call's answer when it is not signed: 202 throws ApprovalPendingError, 403 with a reason PaymentBlockedError, 409 already_paid ChallengePaidError, others their typed error. */
function payRefusal(protocol: PayProtocol, response: Response, data: unknown, error: unknown): Error {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (response.status === 202) {
    const d = (data ?? {}) as { approval_id?: string; payment_id?: string };
    return new ApprovalPendingError('the payment waits for a human to approve it', requestId, d.approval_id ?? '', d.payment_id);
  }
  const e = (error ?? {}) as { error?: string; reason?: string; payment_id?: string };
  if (response.status === 403 && e.reason) {
    return new PaymentBlockedError(e.error ?? 'Blocked by policy', 403, requestId, e.reason as BlockReason, protocol);
  }
  if (response.status === 409 && e.reason === 'already_paid') {
    return new ChallengePaidError(e.error ?? 'the challenge was already paid', 409, requestId, e.payment_id, protocol);
  }
  return errorFor(response.status, error, response.headers);
}

export class AgentWallet {
  private readonly api: ReturnType<typeof createClient<paths>>;
  /** The fetch as given (no retries): x402 sellers are reached with it. */
  private readonly plainFetch: typeof fetch;

  constructor(opts: AgentWalletOptions) {
    if (!opts.apiKey) throw new Error('AgentWallet: apiKey is required');
    const baseUrl = (opts.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '').replace(new RegExp(`${PREFIX}$`), '');
    const doFetch = opts.fetch ?? globalThis.fetch;
    this.plainFetch = (input, init) => doFetch(input, init);
    const maxRetries = opts.maxRetries ?? 3;
    this.api = createClient<paths>({
      baseUrl,
      headers: { Authorization: `Bearer ${opts.apiKey}` },
      fetch: async (req: Request) => {
        for (let attempt = 0; ; attempt++) {
          let res: Response;
          try {
            res = await doFetch(req.clone());
          } catch (err) {
            if (attempt < maxRetries && retryable(req)) {
              await sleep(backoff(attempt));
              continue;
            }
            throw new ServiceUnavailableError(`no answer from the service: ${(err as Error).message}`, 0);
          }
          if ((res.status === 429 || res.status === 502 || res.status === 503) && attempt < maxRetries && retryable(req)) {
            const after = Number(res.headers.get('retry-after'));
            await sleep(after > 0 ? after * 1000 : backoff(attempt));
            continue;
          }
          return res;
        }
      },
    });
  }

  /** Unwraps an openapi-fetch answer, throwing the typed error of a failure. */
  private async do<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await p;
    if (!response.ok) throw errorFor(response.status, error, response.headers);
    return data as T;
  }

  /** Pages a cursor list as an async iterator. */
  private async *pages<T>(fetchPage: (cursor?: string) => Promise<{ items: T[]; next: string | null | undefined }>): AsyncGenerator<T> {
    let cursor: string | undefined;
    for (;;) {
      const { items, next } = await fetchPage(cursor);
      yield* items;
      if (!next) return;
      cursor = next;
    }
  }

  /** Reads every item of an async iterator. */
  private async collect<T>(items: AsyncIterable<T>): Promise<T[]> {
    const out: T[] = [];
    for await (const it of items) out.push(it);
    return out;
  }

  readonly agents = {
    /** Every agent wallet, newest first: the service answers a page at a time, and this reads them all (`search('')` iterates instead). */
    list: (): Promise<Agent[]> => this.collect(this.agentPages('', 500)),
    create: (label: string, policy?: PolicyInput): Promise<Agent> =>
      this.do(this.api.POST('/api/public/v1/agents', { body: policy ? { label, policy } : { label } })),
    get: (id: string): Promise<Agent> => this.do(this.api.GET('/api/public/v1/agents/{id}', { params: { path: { id } } })),
    updatePolicy: (id: string, policy: PolicyInput): Promise<Agent> =>
      this.do(this.api.PATCH('/api/public/v1/agents/{id}/policy', { params: { path: { id } }, body: policy })),
    freeze: (id: string): Promise<Agent> => this.do(this.api.POST('/api/public/v1/agents/{id}/freeze', { params: { path: { id } } })),
    unfreeze: (id: string): Promise<Agent> => this.do(this.api.POST('/api/public/v1/agents/{id}/unfreeze', { params: { path: { id } } })),
    /**
     * Sends USDC, or the asset given, under the wallet's policy. A policy
     * block is a result (status "blocked"), not an exception. Every send
     * carries an Idempotency-Key, so the retries of 429/502/503 never pay
     * twice.
     */
    send: async (id: string, input: SendInput): Promise<SendResult> => {
      const idempotencyKey = input.idempotencyKey ?? crypto.randomUUID();
      const { data, error, response } = await this.api.POST('/api/public/v1/agents/{id}/send', {
        params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey } },
        body: { to: input.to, amount: input.amount, ...(input.asset ? { asset: input.asset } : {}), ...(input.memo ? { memo: input.memo } : {}) },
      });
      const replayed = response.headers.get('idempotent-replayed') === 'true';
      if (response.status === 403) {
        const e = (error ?? {}) as { reason?: BlockReason; remaining_today_usdc?: number; remaining_today_eur?: number };
        if (e.reason) {
          const eur = e.remaining_today_eur !== undefined;
          return {
            status: 'blocked',
            reason: e.reason,
            currency: eur ? 'EUR' : 'USD',
            remainingTodayUsdc: e.remaining_today_usdc ?? 0,
            ...(eur ? { remainingTodayEur: e.remaining_today_eur } : {}),
            idempotencyKey,
            replayed,
          };
        }
      }
      if (!response.ok || !data) throw errorFor(response.status, error, response.headers);
      if (data.status === 'pending_approval') return { status: 'pending_approval', approvalId: data.approval_id!, idempotencyKey, replayed };
      return {
        status: 'sent',
        signature: data.signature!,
        idempotencyKey,
        replayed,
        ...(data.transaction_status ? { transactionStatus: data.transaction_status } : {}),
      };
    },
    /** What a send would do now; with `policy`, were that policy change saved. Writes nothing. */
    preview: (id: string, input: Omit<SendInput, 'idempotencyKey'> & { policy?: PolicyInput }): Promise<Preview> =>
      this.do(
        this.api.POST('/api/public/v1/agents/{id}/send/preview', {
          params: { path: { id } },
          body: {
            to: input.to,
            amount: input.amount,
            ...(input.asset ? { asset: input.asset } : {}),
            ...(input.memo ? { memo: input.memo } : {}),
            ...(input.policy ? { policy: input.policy } : {}),
          },
        }),
      ),
    /** Agents whose label contains q (any case) or whose address starts with it, page after page. */
    search: (q: string, pageSize = 100) => this.agentPages(q, pageSize),
  };

  private agentPages(q: string, pageSize: number): AsyncGenerator<Agent> {
    return this.pages<Agent>(async (cursor) => {
      const query = { limit: pageSize, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) };
      const d = await this.do(this.api.GET('/api/public/v1/agents', { params: { query } }));
      return { items: d.agents, next: d.next_cursor };
    });
  }

  readonly x402 = {
    /**
     * Asks the service to pay an x402 challenge from the wallet, under its
     * policy: `paymentRequired` is the decoded PAYMENT-REQUIRED header (v2)
     * or the 402's JSON body (v1). Answers the signed payment; a parked one
     * throws ApprovalPendingError, a policy block PaymentBlockedError (403),
     * a challenge the wallet cannot pay ValidationError (422).
     */
    pay: async (
      walletId: string,
      paymentRequired: unknown,
      resource: string,
      opts: Omit<X402FetchOptions, 'fetch'> = {},
    ): Promise<X402Payment> => {
      const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
      const { data, error, response } = await this.api.POST('/api/public/v1/agents/{id}/x402/pay', {
        params: { path: { id: walletId }, header: { 'Idempotency-Key': idempotencyKey } },
        body: {
          payment_required: paymentRequired as Record<string, unknown>,
          resource,
          ...(opts.maxUsdc !== undefined ? { max_usdc: opts.maxUsdc } : {}),
          ...(opts.approvalId ? { approval_id: opts.approvalId } : {}),
        },
      });
      if (response.status !== 200 || !data) throw payRefusal('x402', response, data, error);
      return {
        paymentId: data.payment_id!,
        header: data.header as X402Payment['header'],
        paymentSignature: data.payment_signature!,
        amount: data.amount!,
        payTo: data.pay_to!,
        network: data.network!,
        resource: data.resource!,
        idempotencyKey,
      };
    },
    /**
     * Like fetch, and answers what was paid too: on a 402 carrying an x402
     * challenge, the service pays it and the request is sent once more
     * with the payment header; the answer to that retry is returned
     * whatever it is (another 402 means the seller refused the payment).
     */
    fetchWithPayment: async (walletId: string, input: RequestInfo | URL, init?: RequestInit, opts: X402FetchOptions = {}): Promise<X402FetchResult> => {
      const { response, payment, pending } = await this.fetchPaying(input, init, { ...opts, walletId, only: 'x402' }, opts.idempotencyKey);
      if (pending) throw pending;
      if (!payment) return { response };
      return { response, payment: payment.x402!, ...(payment.settlement ? { settlement: payment.settlement } : {}) };
    },
    /** fetch, paying x402 challenges from the wallet (see fetchWithPayment). */
    fetch: async (walletId: string, input: RequestInfo | URL, init?: RequestInit, opts: X402FetchOptions = {}): Promise<Response> =>
      (await this.x402.fetchWithPayment(walletId, input, init, opts)).response,
    /** The service's record of x402 payments: signed, settled (with the on-chain signature), expired, parked… */
    payments: {
      get: (id: string): Promise<X402PaymentRecord> =>
        this.do(this.api.GET('/api/public/v1/x402/payments/{id}', { params: { path: { id } } })),
      /** Every payment the filter selects, newest first, page after page. */
      list: (filter: { walletId?: string; state?: X402PaymentRecord['state']; since?: Date; until?: Date; pageSize?: number } = {}) =>
        this.pages<X402PaymentRecord>(async (cursor) => {
          const d = await this.do(
            this.api.GET('/api/public/v1/x402/payments', {
              params: {
                query: {
                  limit: filter.pageSize ?? 100,
                  ...(cursor ? { cursor } : {}),
                  ...(filter.walletId ? { wallet_id: filter.walletId } : {}),
                  ...(filter.state ? { state: filter.state } : {}),
                  ...(filter.since ? { since: filter.since.toISOString() } : {}),
                  ...(filter.until ? { until: filter.until.toISOString() } : {}),
                },
              },
            }),
          );
          return { items: d.payments, next: d.next_cursor };
        }),
    },
    /** A fetch bound to the wallet and options, to hand to code that takes a fetch. */
    wrapFetch:
      (walletId: string, opts: X402FetchOptions = {}): typeof fetch =>
      (input: RequestInfo | URL, init?: RequestInit) =>
        this.x402.fetch(walletId, input, init, opts),
  };

  readonly mpp = {
    /**
     * Asks the service to pay an MPP challenge from the wallet, under its
     * policy: `challenge` is the 402's WWW-Authenticate value (every line,
     * joined with ", "), `resource` the URL paid for. Answers the signed
     * payment (retry the request with `header: authorization`); a parked
     * one throws ApprovalPendingError, a policy block PaymentBlockedError
     * (403), a challenge the wallet cannot pay ValidationError (422).
     */
    pay: async (walletId: string, challenge: string, resource: string, opts: MPPPayOptions = {}): Promise<MPPPayment> => {
      const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
      const { data, error, response } = await this.api.POST('/api/public/v1/agents/{id}/mpp/pay', {
        params: { path: { id: walletId }, header: { 'Idempotency-Key': idempotencyKey } },
        body: {
          challenge,
          resource,
          ...(opts.maxUsdc !== undefined ? { max_usdc: opts.maxUsdc } : {}),
          ...(opts.approvalId ? { approval_id: opts.approvalId } : {}),
        },
      });
      if (response.status !== 200 || !data) throw payRefusal('mpp', response, data, error);
      return {
        paymentId: data.payment_id,
        header: data.header!,
        authorization: data.authorization!,
        amount: data.amount,
        asset: data.asset,
        payTo: data.pay_to,
        splits: data.splits,
        network: data.network,
        resource: data.resource,
        idempotencyKey,
      };
    },
    /** Keeps the seller's Payment-Receipt header value for the payment (once: a second report changes nothing); answers the payment. */
    recordReceipt: (paymentId: string, receipt: string): Promise<MPPPaymentRecord> =>
      this.do(this.api.POST('/api/public/v1/mpp/payments/{id}/receipt', { params: { path: { id: paymentId } }, body: { receipt } })),
    /** The service's record of MPP payments: signed, settled (with the on-chain signature), expired, parked… and the seller's receipt once reported. */
    payments: {
      get: (id: string): Promise<MPPPaymentRecord> => this.do(this.api.GET('/api/public/v1/mpp/payments/{id}', { params: { path: { id } } })),
      /** Every payment the filter selects, newest first, page after page. */
      list: (filter: { walletId?: string; state?: MPPPaymentRecord['state']; since?: Date; until?: Date; pageSize?: number } = {}) =>
        this.pages<MPPPaymentRecord>(async (cursor) => {
          const d = await this.do(
            this.api.GET('/api/public/v1/mpp/payments', {
              params: {
                query: {
                  limit: filter.pageSize ?? 100,
                  ...(cursor ? { cursor } : {}),
                  ...(filter.walletId ? { wallet_id: filter.walletId } : {}),
                  ...(filter.state ? { state: filter.state } : {}),
                  ...(filter.since ? { since: filter.since.toISOString() } : {}),
                  ...(filter.until ? { until: filter.until.toISOString() } : {}),
                },
              },
            }),
          );
          return { items: d.payments, next: d.next_cursor };
        }),
    },
  };

  /**
   * Like fetch, paying what the seller asks in either protocol: on a 402,
   * the service pays its MPP challenge (WWW-Authenticate: Payment) or its
   * x402 challenge (PAYMENT-REQUIRED, or a v1 body) from the wallet, under
   * its policy, and the request is sent once more with the credential.
   * A 402 offering both is paid once: by `prefer` (default `mpp`), and by
   * the other only when the service cannot pay the preferred one (422).
   * An MPP seller's Payment-Receipt is reported to the service.
   *
   * A payment waiting for a human is a result, not an exception:
   * `payment.status` is `pending_approval` with its `approvalId`, and
   * `response` the 402; once approved, call again with `{ approvalId }`.
   * A policy block throws PaymentBlockedError (`reason`, `protocol`), a
   * payment the service cannot make ValidationError, a 402 without a
   * challenge it may pay PaymentChallengeError.
   *
   * A 402 repeating an MPP challenge this account already paid (a seller
   * whose 402 never changes) throws ChallengePaidError naming that payment
   * (`paymentId`), and nothing else is paid: not the other protocol, and the
   * earlier credential is not sent again (it answers its challenge once).
   */
  async payFetch(input: RequestInfo | URL, init: RequestInit | undefined, opts: PayFetchOptions): Promise<PayFetchResult> {
    const { response, payment } = await this.fetchPaying(input, init, opts);
    return payment ? { response, payment } : { response };
  }

  /** payFetch, answering a parked payment's ApprovalPendingError beside it (x402.fetchWithPayment throws it). */
  private async fetchPaying(
    input: RequestInfo | URL,
    init: RequestInit | undefined,
    opts: PayFetchOptions,
    idempotencyKey?: string,
  ): Promise<PayFetchResult & { pending?: ApprovalPendingError }> {
    if (!opts?.walletId) throw new TypeError('payFetch: walletId is required');
    const order = protocolOrder(opts);
    const doFetch = opts.fetch ?? this.plainFetch;
    const request = await replayable(input, init);
    const first = request();
    const answer = await doFetch(first);
    if (answer.status !== 402) return { response: answer };
    const offers = await readOffers(answer);
    if (carriesPayment(first.headers)) {
      throw new AgentWalletError('the request already carried a payment and the seller answered 402 again', 402);
    }
    const resource = answer.url || first.url;
    const declined: { protocol: PayProtocol; error: AgentWalletError }[] = [];
    for (const protocol of order) {
      if (protocol === 'mpp' ? !offers.mpp : offers.x402 === undefined) continue;
      const payOpts = {
        ...(opts.maxUsdc !== undefined ? { maxUsdc: opts.maxUsdc } : {}),
        ...(opts.approvalId ? { approvalId: opts.approvalId } : {}),
        ...(idempotencyKey && declined.length === 0 ? { idempotencyKey } : {}),
      };
      let payment: FetchPayment;
      let header: string;
      let value: string;
      try {
        if (protocol === 'mpp') {
          const p = await this.mpp.pay(opts.walletId, offers.mpp!, resource, payOpts);
          payment = { protocol, status: 'paid', paymentId: p.paymentId, amount: p.amount, asset: p.asset, payTo: p.payTo, mpp: p };
          [header, value] = [p.header, p.authorization];
        } else {
          const p = await this.x402.pay(opts.walletId, offers.x402, resource, payOpts);
          payment = { protocol, status: 'paid', paymentId: p.paymentId, amount: p.amount, payTo: p.payTo, x402: p };
          [header, value] = [p.header, p.paymentSignature];
        }
        payment.network = payment.mpp?.network ?? payment.x402?.network;
        payment.resource = payment.mpp?.resource ?? payment.x402?.resource;
      } catch (e) {
        if (e instanceof ApprovalPendingError) {
          const parked: FetchPayment = {
            protocol,
            status: 'pending_approval',
            approvalId: e.approvalId,
            ...(e.paymentId ? { paymentId: e.paymentId } : {}),
            ...(declined.length ? { declined: declinedError(declined) } : {}),
          };
          return { response: offers.response, payment: parked, pending: e };
        }
        // Only a 422 tries the other protocol: a challenge paid before
        // (ChallengePaidError, 409) was this 402's answer, and a block or
        // any other failure is a decision about this purchase.
        if (e instanceof AgentWalletError && e.status === 422 && !(e instanceof ChallengePaidError)) {
          declined.push({ protocol, error: e });
          continue;
        }
        throw e;
      }
      if (declined.length) payment.declined = declinedError(declined);
      const retry = request();
      retry.headers.set(header, value);
      if (protocol === 'x402') retry.headers.set('Access-Control-Expose-Headers', 'PAYMENT-RESPONSE,X-PAYMENT-RESPONSE');
      const paid = await doFetch(retry);
      if (protocol === 'x402') {
        const settlement = readSettlement(paid);
        if (settlement) payment.settlement = settlement;
      } else {
        const receipt = paid.headers.get('Payment-Receipt');
        if (receipt) {
          try {
            const record = await this.mpp.recordReceipt(payment.paymentId!, receipt.trim());
            if (record.receipt) payment.receipt = record.receipt;
          } catch (e) {
            payment.receiptError = e as Error;
          }
        }
      }
      return { response: paid, payment };
    }
    if (declined.length) throw declinedError(declined);
    const detail =
      order.length === 1 && order[0] === 'x402'
        ? `the 402 carries no x402 challenge (${offers.x402Error})`
        : order.length === 1
          ? 'the 402 carries no MPP Payment challenge (WWW-Authenticate: Payment)'
          : `the 402 carries neither an MPP Payment challenge nor an x402 challenge (${offers.x402Error})`;
    throw order.length === 1 && order[0] === 'x402' ? new X402ChallengeError(detail) : new PaymentChallengeError(detail);
  }

  readonly wallets = {
    /** Every wallet, newest first, read page after page. */
    list: (): Promise<Wallet[]> =>
      this.collect(
        this.pages<Wallet>(async (cursor) => {
          const d = await this.do(this.api.GET('/api/public/v1/wallets', { params: { query: { limit: 500, ...(cursor ? { cursor } : {}) } } }));
          return { items: d.wallets, next: d.next_cursor };
        }),
      ),
    balance: (id: string): Promise<Balance> => this.do(this.api.GET('/api/public/v1/wallets/{id}/balance', { params: { path: { id } } })),
    /**
     * The wallet's balance over time, from its ledger (every change, read
     * from the transactions that made it: sends with their fees, deposits):
     * a series per asset asked (`asset`: USDC by default, a symbol of
     * `assets.list()` or SOL in any case, or `'all'` for a series of each),
     * a point every `interval` (day by default) from `from` to `to` (default:
     * the 30 intervals ending now), or one point, the balance `at` an instant;
     * each point names its asset and its amount in that asset.
     */
    balanceHistory: (
      id: string,
      range: ({ from?: Date | string; to?: Date | string; interval?: 'hour' | 'day' } | { at: Date | string }) & { asset?: string } = {},
    ): Promise<BalanceHistory> => {
      const iso = (t: Date | string) => (typeof t === 'string' ? t : t.toISOString());
      const query = {
        ...(range.asset ? { asset: range.asset } : {}),
        ...('at' in range
          ? { at: iso(range.at) }
          : {
              ...(range.from ? { from: iso(range.from) } : {}),
              ...(range.to ? { to: iso(range.to) } : {}),
              ...(range.interval ? { interval: range.interval } : {}),
            }),
      };
      return this.do(this.api.GET('/api/public/v1/wallets/{id}/balance/history', { params: { path: { id }, query } }));
    },
    /**
     * Money of the wallet that moved without the service, newest first, page
     * after page: outflows in transactions it did not make
     * (wallet.unexplained_outflow) and daily snapshots whose chain balance
     * differed from the ledger (wallet.balance_mismatch), of every asset or of
     * one (`asset`, any case), each in its asset's units. Empty when every
     * change is explained.
     */
    balanceDifferences: (id: string, filter: { asset?: string; pageSize?: number } = {}) =>
      this.pages<BalanceDifference>(async (cursor) => {
        const d = await this.do(
          this.api.GET('/api/public/v1/wallets/{id}/balance/differences', {
            params: {
              path: { id },
              query: { limit: filter.pageSize ?? 100, ...(filter.asset ? { asset: filter.asset } : {}), ...(cursor ? { cursor } : {}) },
            },
          }),
        );
        return { items: d.items, next: d.next_cursor };
      }),
    /** Adds test USDC and SOL on a local chain (a 409 ConflictError elsewhere); answers the new balance. */
    fund: (id: string, amounts: { usdc?: number; sol?: number }): Promise<Balance> =>
      this.do(this.api.POST('/api/public/v1/wallets/{id}/fund', { params: { path: { id } }, body: amounts })),
  };

  readonly assets = {
    /**
     * The tokens the service knows on the key's network, USDC first: what a
     * send's `asset` and a policy's `assets` name, with the currency each
     * counts in (USD ones under the _usdc limits, EUR ones under the _eur).
     */
    list: async (): Promise<{ network: string; assets: Asset[] }> => this.do(this.api.GET('/api/public/v1/assets')),
  };

  readonly transactions = {
    /**
     * Every transaction the filter selects, newest first, page after page:
     * payments out (direction "send") and deposits, money that came in
     * (direction "receive", the sender as counterparty). Each names its
     * asset (a symbol, or SOL) and its amount is in that asset.
     * `direction` selects one of the two, `asset` one asset (any case).
     */
    list: (
      filter: {
        walletId?: string;
        status?: 'pending' | 'confirmed' | 'failed';
        direction?: 'send' | 'receive';
        asset?: AssetSymbol | 'SOL';
        since?: Date;
        until?: Date;
        pageSize?: number;
      } = {},
    ) =>
      this.pages<Transaction>(async (cursor) => {
        const d = await this.do(
          this.api.GET('/api/public/v1/transactions', {
            params: {
              query: {
                limit: filter.pageSize ?? 100,
                ...(cursor ? { cursor } : {}),
                ...(filter.walletId ? { wallet_id: filter.walletId } : {}),
                ...(filter.status ? { status: filter.status } : {}),
                ...(filter.direction ? { direction: filter.direction } : {}),
                ...(filter.asset ? { asset: filter.asset } : {}),
                ...(filter.since ? { since: filter.since.toISOString() } : {}),
                ...(filter.until ? { until: filter.until.toISOString() } : {}),
              },
            },
          }),
        );
        return { items: d.transactions, next: d.next_cursor };
      }),
  };

  readonly approvals = {
    list: (filter: { status?: Approval['status']; walletId?: string; pageSize?: number } = {}) =>
      this.pages<Approval>(async (cursor) => {
        const d = await this.do(
          this.api.GET('/api/public/v1/approvals', {
            params: {
              query: {
                limit: filter.pageSize ?? 50,
                ...(cursor ? { cursor } : {}),
                ...(filter.status ? { status: filter.status } : {}),
                ...(filter.walletId ? { wallet_id: filter.walletId } : {}),
              },
            },
          }),
        );
        return { items: d.approvals, next: d.next_cursor };
      }),
    get: (id: string): Promise<Approval> => this.do(this.api.GET('/api/public/v1/approvals/{id}', { params: { path: { id } } })),
    context: (id: string): Promise<ApprovalContext> =>
      this.do(this.api.GET('/api/public/v1/approvals/{id}/context', { params: { path: { id } } })),
    approve: (id: string, note?: string): Promise<Approval> =>
      this.do(this.api.POST('/api/public/v1/approvals/{id}/approve', { params: { path: { id } }, body: note ? { note } : {} })),
    reject: (id: string, note?: string): Promise<Approval> =>
      this.do(this.api.POST('/api/public/v1/approvals/{id}/reject', { params: { path: { id } }, body: note ? { note } : {} })),
  };

  readonly auditLog = {
    list: (filter: { action?: string; target?: string; pageSize?: number } = {}) =>
      this.pages<AuditEntry>(async (cursor) => {
        const d = await this.do(
          this.api.GET('/api/public/v1/audit-log', {
            params: {
              query: {
                limit: filter.pageSize ?? 100,
                ...(cursor ? { cursor } : {}),
                ...(filter.action ? { action: filter.action } : {}),
                ...(filter.target ? { target: filter.target } : {}),
              },
            },
          }),
        );
        return { items: d.entries, next: d.next_cursor };
      }),
    /** Walks the account's whole hash chain: verified through entry N, or the first broken entry. */
    verify: (): Promise<AuditVerification> => this.do(this.api.GET('/api/public/v1/audit-log/verification')),
  };

  readonly analytics = {
    /** Spend per day per wallet, deposits (received) per day, wallet and asset, approvals per day with the median time to decide, blocks by rule; days are UTC, YYYY-MM-DD. */
    get: (range: { from?: string; to?: string } = {}): Promise<Analytics> =>
      this.do(this.api.GET('/api/public/v1/analytics', { params: { query: range } })),
  };

  readonly keys = {
    list: (filter: { pageSize?: number } = {}) =>
      this.pages<Key>(async (cursor) => {
        const d = await this.do(this.api.GET('/api/public/v1/keys', { params: { query: { limit: filter.pageSize ?? 100, ...(cursor ? { cursor } : {}) } } }));
        return { items: d.keys, next: d.next_cursor };
      }),
    create: (input: { role?: 'agent' | 'admin'; walletIds?: string[]; label?: string } = {}): Promise<NewKey> =>
      this.do(
        this.api.POST('/api/public/v1/keys', {
          body: {
            ...(input.role ? { role: input.role } : {}),
            ...(input.walletIds ? { wallet_ids: input.walletIds } : {}),
            ...(input.label ? { label: input.label } : {}),
          },
        }),
      ),
    rotate: (id: string): Promise<NewKey> => this.do(this.api.POST('/api/public/v1/keys/{id}/rotate', { params: { path: { id } } })),
    revoke: (id: string): Promise<Key> => this.do(this.api.DELETE('/api/public/v1/keys/{id}', { params: { path: { id } } })),
  };

  readonly webhooks = {
    create: (input: Schemas['EndpointBody']): Promise<WebhookEndpointWithSecret> =>
      this.do(this.api.POST('/api/public/v1/webhook-endpoints', { body: input })),
    list: async (): Promise<WebhookEndpoint[]> => (await this.do(this.api.GET('/api/public/v1/webhook-endpoints'))).endpoints,
    get: (id: string): Promise<WebhookEndpoint> =>
      this.do(this.api.GET('/api/public/v1/webhook-endpoints/{id}', { params: { path: { id } } })),
    update: (id: string, input: Schemas['EndpointBody']): Promise<WebhookEndpoint> =>
      this.do(this.api.PATCH('/api/public/v1/webhook-endpoints/{id}', { params: { path: { id } }, body: input })),
    delete: async (id: string): Promise<void> => {
      await this.do(this.api.DELETE('/api/public/v1/webhook-endpoints/{id}', { params: { path: { id } } }));
    },
    /** Queues a webhook.test event to the endpoint; answers its delivery. */
    test: (id: string): Promise<Delivery> =>
      this.do(this.api.POST('/api/public/v1/webhook-endpoints/{id}/test', { params: { path: { id } } })),
    rotateSecret: (id: string): Promise<WebhookEndpointWithSecret> =>
      this.do(this.api.POST('/api/public/v1/webhook-endpoints/{id}/rotate-secret', { params: { path: { id } } })),
    deliveries: (endpointId: string, filter: { status?: Delivery['status']; pageSize?: number } = {}) =>
      this.pages<Delivery>(async (cursor) => {
        const d = await this.do(
          this.api.GET('/api/public/v1/webhook-endpoints/{id}/deliveries', {
            params: {
              path: { id: endpointId },
              query: { limit: filter.pageSize ?? 50, ...(cursor ? { cursor } : {}), ...(filter.status ? { status: filter.status } : {}) },
            },
          }),
        );
        return { items: d.deliveries, next: d.next_cursor };
      }),
    getDelivery: (id: string) => this.do(this.api.GET('/api/public/v1/deliveries/{id}', { params: { path: { id } } })),
    replay: (id: string): Promise<Delivery> => this.do(this.api.POST('/api/public/v1/deliveries/{id}/replay', { params: { path: { id } } })),
  };

  readonly users = {
    list: async (): Promise<User[]> => (await this.do(this.api.GET('/api/public/v1/users'))).users,
    create: (address: string, role: User['role']): Promise<User> => this.do(this.api.POST('/api/public/v1/users', { body: { address, role } })),
    update: (address: string, role: User['role']): Promise<User> =>
      this.do(this.api.PATCH('/api/public/v1/users/{address}', { params: { path: { address } }, body: { role } })),
    delete: async (address: string): Promise<void> => {
      await this.do(this.api.DELETE('/api/public/v1/users/{address}', { params: { path: { address } } }));
    },
  };
}

/** The service's 422s for each protocol tried: the one error itself, or a ValidationError naming each. */
function declinedError(declined: { protocol: PayProtocol; error: AgentWalletError }[]): AgentWalletError {
  if (declined.length === 1) return declined[0].error;
  return new ValidationError(
    declined.map((d) => `${d.protocol}: ${d.error.message}`).join('; '),
    422,
    declined.at(-1)!.error.requestId,
    declined.flatMap((d) => d.error.details),
  );
}

function backoff(attempt: number): number {
  return Math.min(500 * 2 ** attempt, 10_000);
}

export { AgentWalletError };
