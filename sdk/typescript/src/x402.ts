// x402 buying: a fetch that answers a seller's 402 by asking the service to
// pay (under the wallet's policy, with the key in the service's worker)
// and retrying once with the payment header, as the official @x402/fetch
// wrapper does with a local key.
import { AgentWalletError } from './errors.js';
import { PaymentChallengeError } from './payfetch.js';

/** A payment the service signed for an x402 challenge. */
export interface X402Payment {
  paymentId: string;
  /** The request header that carries it: PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1). */
  header: 'PAYMENT-SIGNATURE' | 'X-PAYMENT';
  /** The header's value: the base64 PaymentPayload. */
  paymentSignature: string;
  /** USDC in whole units. */
  amount: number;
  payTo: string;
  network: string;
  resource: string;
  idempotencyKey: string;
}

/** The seller's settlement answer (PAYMENT-RESPONSE or X-PAYMENT-RESPONSE), decoded. */
export interface X402Settlement {
  success: boolean;
  /** The on-chain transaction's signature. */
  transaction?: string;
  network?: string;
  payer?: string;
  errorReason?: string;
}

export interface X402FetchOptions {
  /** The most this payment may cost, in USDC: a dearer challenge is refused (ValidationError) and nothing is signed. */
  maxUsdc?: number;
  /** After a human approved a parked payment (ApprovalPendingError), its id: the service pays what was approved, once. */
  approvalId?: string;
  /** The pay call's Idempotency-Key (one is made when omitted): retrying with the same key never pays twice. */
  idempotencyKey?: string;
  /** The fetch that reaches the seller (default: the client's fetch, else globalThis.fetch). */
  fetch?: typeof fetch;
}

/** What fetchWithPayment did: the final response and, when it paid, the payment and the seller's settlement answer. */
export interface X402FetchResult {
  response: Response;
  payment?: X402Payment;
  settlement?: X402Settlement;
}

/** 202 from the pay call: the payment is at or over the wallet's approval threshold and waits for a human. */
export class ApprovalPendingError extends AgentWalletError {
  override name = 'ApprovalPendingError';
  constructor(
    message: string,
    requestId: string | undefined,
    /** The approval (ap_…): once approved, fetch again with `{ approvalId }`. */
    readonly approvalId: string,
    /** The parked payment's id, when the service gave it. */
    readonly paymentId?: string,
  ) {
    super(message, 202, requestId);
  }
}

/** The seller's 402 is not an x402 challenge this client can read (no PAYMENT-REQUIRED header, no v1 JSON body). */
export class X402ChallengeError extends PaymentChallengeError {
  override name = 'X402ChallengeError';
}

/** The PaymentRequired object of a 402: the decoded PAYMENT-REQUIRED header (v2), or the JSON body when it says x402Version 1. */
export async function readChallenge(res: Response): Promise<unknown> {
  const header = res.headers.get('PAYMENT-REQUIRED');
  if (header) {
    await res.body?.cancel();
    try {
      return JSON.parse(new TextDecoder().decode(base64Bytes(header.trim())));
    } catch (e) {
      throw new X402ChallengeError(`the PAYMENT-REQUIRED header is not base64 JSON: ${(e as Error).message}`);
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(await res.text());
  } catch {
    // Not JSON: not a v1 challenge either.
  }
  if (body && typeof body === 'object' && (body as { x402Version?: unknown }).x402Version === 1) return body;
  throw new X402ChallengeError('the 402 carries no x402 challenge (no PAYMENT-REQUIRED header, no x402Version 1 body)');
}

/** Decodes a settlement header, or undefined when absent or unreadable (the content was still served). */
export function readSettlement(res: Response): X402Settlement | undefined {
  const v = res.headers.get('PAYMENT-RESPONSE') ?? res.headers.get('X-PAYMENT-RESPONSE');
  if (!v) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(base64Bytes(v.trim()))) as X402Settlement;
  } catch {
    return undefined;
  }
}

function base64Bytes(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * The request twice over: the body is read once into memory, so the paid
 * retry sends the same bytes (a stream cannot be replayed; the official
 * wrapper tees it, which buffers it just the same).
 */
export async function replayable(input: RequestInfo | URL, init?: RequestInit): Promise<() => Request> {
  const first = new Request(input, init);
  const bytes = first.body ? new Uint8Array(await first.arrayBuffer()) : null;
  return () => new Request(first, bytes ? { body: bytes } : {});
}
