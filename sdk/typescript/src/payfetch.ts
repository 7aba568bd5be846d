// Paying whatever a seller asks: a 402 may carry challenges of two
// protocols, MPP (WWW-Authenticate: Payment …, the Machine Payments
// Protocol's Solana charge) and x402 (PAYMENT-REQUIRED, or a v1 JSON
// body). payFetch (index.ts) reads both, pays one through the service and
// retries once; this file reads the 402.
import type { X402Payment, X402Settlement } from './x402.js';

/** A protocol payFetch pays: `mpp` (the Payment HTTP authentication scheme's Solana charge) or `x402`. */
export type PayProtocol = 'mpp' | 'x402';

/** A seller's Payment-Receipt as the service keeps it. */
export interface MPPReceipt {
  /** The transaction's signature, as the seller gives it. */
  reference: string;
  status: string;
  timestamp: string;
  challenge_id: string;
  external_id?: string;
}

/** A payment the service signed for an MPP challenge. */
export interface MPPPayment {
  paymentId: string;
  /** The request header that carries it: Authorization, or the one the challenge names (Payment-Authorization). */
  header: string;
  /** The header's value: "Payment " and the credential. */
  authorization: string;
  /** Paid in all (splits included), in whole units of asset. */
  amount: number;
  asset: string;
  payTo: string;
  /** Further recipients and their shares. */
  splits: { to: string; amount: number }[];
  network: string;
  resource: string;
  idempotencyKey: string;
}

export interface MPPPayOptions {
  /** The most this payment may cost, in whole units of the asset paid: a dearer challenge is refused (ValidationError) and nothing is signed. */
  maxUsdc?: number;
  /** After a human approved a parked payment, its id: the service pays the seller's fresh challenge for what was approved, once. */
  approvalId?: string;
  /** The pay call's Idempotency-Key (one is made when omitted). */
  idempotencyKey?: string;
}

export interface PayFetchOptions {
  /** The paying wallet. */
  walletId: string;
  /** The protocol paid when a 402 offers both (default `mpp`); the other is paid only when the service cannot pay this one (422), never after a ChallengePaidError (409: the challenge was paid before). */
  prefer?: PayProtocol;
  /** Pay only this protocol: a 402 offering only the other is a PaymentChallengeError. */
  only?: PayProtocol;
  /** The most to pay, in whole units of the asset paid. */
  maxUsdc?: number;
  /** After a human approved a parked payment (a result with status `pending_approval`), its id: the same call pays what was approved, once. */
  approvalId?: string;
  /** The fetch that reaches the seller (default: the client's fetch, else globalThis.fetch). */
  fetch?: typeof fetch;
}

/** What payFetch paid, or parked. */
export interface FetchPayment {
  /** The protocol paid (or parked). */
  protocol: PayProtocol;
  /** paid: the paid retry was sent and answered (its status says whether the seller took it); pending_approval: nothing was paid, a human decides. */
  status: 'paid' | 'pending_approval';
  paymentId?: string;
  /** When pending_approval: once approved, call payFetch again with `{ approvalId }`. */
  approvalId?: string;
  /** Paid in all, in whole units of the asset (asset, for MPP). */
  amount?: number;
  asset?: string;
  payTo?: string;
  network?: string;
  resource?: string;
  /** x402: the seller's decoded PAYMENT-RESPONSE. */
  settlement?: X402Settlement;
  /** MPP: the seller's Payment-Receipt as the service recorded it; receiptError when it could not be (the content was still served). */
  receipt?: MPPReceipt;
  receiptError?: Error;
  /** Why the preferred protocol was not paid when the other one was (the service's 422). */
  declined?: Error;
  /** The service's answer to the pay call, one of them. */
  mpp?: MPPPayment;
  x402?: X402Payment;
}

/** What payFetch did: the seller's last answer (to the paid retry; or the 402, body intact, of a parked payment), and the payment when one was made or parked. */
export interface PayFetchResult {
  response: Response;
  payment?: FetchPayment;
}

/** The seller's 402 carries no challenge of a protocol this client may pay (nothing was paid). */
export class PaymentChallengeError extends Error {
  override name = 'PaymentChallengeError';
}

/** The challenges of a 402, as the seller sent them. */
export interface Offers {
  /** Every WWW-Authenticate line (joined with ", "), when one carries a Payment challenge. */
  mpp?: string;
  /** The PaymentRequired object: the decoded PAYMENT-REQUIRED header (v2), or the x402Version 1 JSON body. */
  x402?: unknown;
  /** Why there is no x402 offer. */
  x402Error?: string;
  /** The 402 again, its body intact (it was read here). */
  response: Response;
}

/**
 * Whether a WWW-Authenticate value carries a Payment challenge: "Payment"
 * and a space at its start or after a comma, outside quoted strings.
 */
export function hasPaymentScheme(v: string): boolean {
  const scheme = 'payment';
  let inQuote = false;
  let escaped = false;
  let start = true;
  for (let i = 0; i < v.length; i++) {
    const ch = v[i];
    if (inQuote) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inQuote = false;
    } else if (ch === '"') {
      inQuote = true;
      start = false;
    } else if (ch === ',') {
      start = true;
    } else if (ch !== ' ' && ch !== '\t') {
      const next = v[i + scheme.length];
      if (start && v.slice(i, i + scheme.length).toLowerCase() === scheme && (next === ' ' || next === '\t')) return true;
      start = false;
    }
  }
  return false;
}

/** Reads the offers of a 402 (the service validates them in full; this tells which protocols the seller offers). */
export async function readOffers(res: Response): Promise<Offers> {
  const www = res.headers.get('www-authenticate');
  const bytes = new Uint8Array(await res.arrayBuffer());
  const out: Offers = {
    ...(www && hasPaymentScheme(www) ? { mpp: www } : {}),
    response: new Response(bytes, { status: res.status, statusText: res.statusText, headers: res.headers }),
  };
  const header = res.headers.get('PAYMENT-REQUIRED');
  if (header) {
    try {
      out.x402 = JSON.parse(new TextDecoder().decode(base64Bytes(header.trim())));
    } catch (e) {
      out.x402Error = `the PAYMENT-REQUIRED header is not base64 JSON: ${(e as Error).message}`;
    }
    return out;
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    // Not JSON: not a v1 challenge either.
  }
  if (body && typeof body === 'object' && (body as { x402Version?: unknown }).x402Version === 1) out.x402 = body;
  else out.x402Error = 'no PAYMENT-REQUIRED header, no x402Version 1 body';
  return out;
}

/** The protocols payFetch may pay, the preferred first. */
export function protocolOrder(opts: { prefer?: PayProtocol; only?: PayProtocol }): PayProtocol[] {
  for (const p of [opts.prefer, opts.only]) {
    if (p !== undefined && p !== 'mpp' && p !== 'x402') throw new TypeError(`payFetch: protocol ${JSON.stringify(p)}: use "mpp" or "x402"`);
  }
  if (opts.only) return [opts.only];
  return opts.prefer === 'x402' ? ['x402', 'mpp'] : ['mpp', 'x402'];
}

/** Whether a request already carries a payment of either protocol. */
export function carriesPayment(h: Headers): boolean {
  return (
    /^payment /i.test(h.get('Authorization') ?? '') ||
    h.has('Payment-Authorization') ||
    h.has('PAYMENT-SIGNATURE') ||
    h.has('X-PAYMENT')
  );
}

export function base64Bytes(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
