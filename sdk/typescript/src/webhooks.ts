import { WebhookVerificationError } from './errors.js';

/** An event as delivered to a JSON endpoint. */
export interface WebhookEvent<D = Record<string, unknown>> {
  event: string;
  event_id: string;
  timestamp: string;
  data: D;
}

/**
 * What moved, in lower case: an asset of GET /assets (usdc, eurc, pyusd,
 * usdg, usdt, one the operator added; 6 decimals) or sol (9).
 */
export type Asset = 'usdc' | 'sol' | 'eurc' | 'pyusd' | 'usdg' | 'usdt' | (string & {});

/**
 * tx.received: money came into a wallet (an asset of GET /assets to any of
 * its token accounts, or SOL) from anyone but the wallet itself, confirmed;
 * announced once. GET /transactions lists it as direction "receive".
 */
export interface TxReceivedData {
  wallet_id: string;
  /** The deposit's id in GET /transactions. */
  transaction_id: string;
  signature: string;
  asset: Asset;
  /** The asset as the API names it, upper case: USDC, EURC, PYUSD, SOL. */
  symbol: string;
  /** In whole units of `asset`. */
  amount: number;
  /** The sender: the owner whose holding fell most in the transaction. */
  from: string;
  slot: number;
}

/**
 * tx.receive_failed: a deposit announced by tx.received was dropped by a
 * fork (its transaction gone from the chain once its blockhash expired):
 * the money did not come in after all, and the deposit is listed failed.
 * The fields of its tx.received, and why.
 */
export interface TxReceiveFailedData extends TxReceivedData {
  reason: string;
}

/**
 * wallet.unexplained_outflow: money left a wallet in a transaction the
 * service did not make (its key used elsewhere, or a delegate such as a
 * Token-2022 mint's permanent delegate).
 */
export interface UnexplainedOutflowData {
  wallet_id: string;
  signature: string;
  asset: Asset;
  /** The asset as the API names it, upper case. */
  symbol: string;
  /** In whole units of `asset`. */
  amount: number;
  /** Where the money went: the owner whose holding grew most. */
  to: string;
  slot: number;
  /** Who signed instead of the wallet (a delegate); absent when the wallet signed. */
  delegate?: string;
}

/**
 * wallet.balance_mismatch: the daily snapshot found the wallet's balance on
 * chain apart from its ledger's at the same slot (money moved in a way no
 * transaction the service read shows); the ledger holds the chain's balance
 * from then on.
 */
export interface BalanceMismatchData {
  wallet_id: string;
  asset: Asset;
  /** The asset as the API names it, upper case. */
  symbol: string;
  /** The balance on chain at `slot`, in whole units of `asset`. */
  chain: number;
  /** The ledger's balance at the same slot. */
  ledger: number;
  /** chain minus ledger. */
  difference: number;
  slot: number;
  snapshot_id: string;
}

/**
 * user.added: a person was made a user of the account, whoever added them
 * (an owner in the dashboard, an admin key, or the operator's `api users
 * add`), or promoted to owner: every owner hears of a new owner.
 */
export interface UserAddedData {
  /** The new user's Solana address. */
  address: string;
  role: 'owner' | 'approver' | 'viewer';
  /** Who added them: user:<address>, key_<id>, or system (the command line). */
  added_by: string;
  /** The command line's name, when it added them: "api users add". */
  via?: string;
  /** Set when an existing user was promoted to owner: their role before. */
  promoted_from?: 'approver' | 'viewer';
}

/** The data of the event kinds this package types, by kind. */
export interface WebhookEventDataMap {
  'tx.received': TxReceivedData;
  'tx.receive_failed': TxReceiveFailedData;
  'wallet.unexplained_outflow': UnexplainedOutflowData;
  'wallet.balance_mismatch': BalanceMismatchData;
  'user.added': UserAddedData;
}

/** The event kinds an endpoint may subscribe to (its `events`). */
export type WebhookEventKind =
  | 'tx.sent'
  | 'tx.received'
  | 'tx.receive_failed'
  | 'wallet.unexplained_outflow'
  | 'wallet.balance_mismatch'
  | 'tx.blocked'
  | 'tx.failed'
  | 'approval.pending'
  | 'approval.vote'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.expired'
  | 'x402.expired'
  | 'mpp.expired'
  | 'user.added';

/** An event of a typed kind, its data typed: switch on `event` to narrow it. */
export type TypedWebhookEvent = {
  [K in keyof WebhookEventDataMap]: Omit<WebhookEvent<WebhookEventDataMap[K]>, 'event'> & { event: K };
}[keyof WebhookEventDataMap];

/**
 * isWebhookEvent narrows a verified event to one kind with typed data:
 *
 *     const ev = await verifyWebhook(body, headers, secret);
 *     if (isWebhookEvent(ev, 'tx.received')) credit(ev.data.wallet_id, ev.data.asset, ev.data.amount);
 */
export function isWebhookEvent<K extends keyof WebhookEventDataMap>(
  ev: WebhookEvent<unknown>,
  kind: K,
): ev is WebhookEvent<unknown> & { event: K; data: WebhookEventDataMap[K] } {
  return ev.event === kind;
}

export interface VerifyOptions {
  /** How old (or how far in the future) a webhook-timestamp may be. Default 300 s. */
  toleranceSeconds?: number;
  /** The clock, for tests. */
  now?: () => Date;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderBag, name: string): string | undefined {
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const bag = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v[0] : v;
}

const enc = new TextEncoder();

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? enc.encode(body) : body;
}

function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, data as BufferSource));
}

/** Constant-time comparison of equal-length byte strings. */
function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let i = 0;
  for (const p of parts) {
    out.set(p, i);
    i += p.length;
  }
  return out;
}

/**
 * verifyWebhook checks a delivery and answers its event, or throws
 * WebhookVerificationError. It verifies the Standard Webhooks headers
 * (webhook-id, webhook-timestamp within the tolerance, and any of the
 * webhook-signature entries: during a secret rotation both the old and the
 * new secret sign). Pass the raw body, exactly as received.
 */
export async function verifyWebhook<D = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  secret: string,
  opts: VerifyOptions = {},
): Promise<WebhookEvent<D>> {
  if (!secret) throw new WebhookVerificationError('no signing secret given');
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const at = Number(ts);
  if (!Number.isInteger(at)) throw new WebhookVerificationError('malformed webhook-timestamp');
  const now = Math.floor((opts.now?.() ?? new Date()).getTime() / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - at) > tolerance) throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s from now`);
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  const body = bytesOf(rawBody);
  const expected = await hmac(key, concat(enc.encode(`${id}.${ts}.`), body));
  let ok = false;
  for (const entry of sigs.split(' ')) {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || !sig) continue;
    let given: Uint8Array;
    try {
      given = fromBase64(sig);
    } catch {
      continue;
    }
    if (equal(given, expected)) ok = true;
  }
  if (!ok) throw new WebhookVerificationError('no webhook-signature matches');
  return parse<D>(body);
}

/**
 * verifyServiceSignature checks the X-Service-Signature header
 * (sha256=<hex HMAC-SHA256 of the raw body keyed by the secret>). It has
 * no timestamp, so no replay protection: prefer verifyWebhook.
 */
export async function verifyServiceSignature<D = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  secret: string,
): Promise<WebhookEvent<D>> {
  if (!secret) throw new WebhookVerificationError('no signing secret given');
  const body = bytesOf(rawBody);
  const expected = await hmac(enc.encode(secret), body);
  const candidates = [header(headers, 'x-service-signature'), header(headers, 'x-service-signature-previous')];
  let ok = false;
  for (const h of candidates) {
    const hex = h?.startsWith('sha256=') ? h.slice(7) : undefined;
    if (!hex || !/^[0-9a-f]{64}$/.test(hex)) continue;
    const given = new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
    if (equal(given, expected)) ok = true;
  }
  if (!ok) throw new WebhookVerificationError('X-Service-Signature does not match');
  return parse<D>(body);
}

function parse<D>(body: Uint8Array): WebhookEvent<D> {
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent<D>;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
