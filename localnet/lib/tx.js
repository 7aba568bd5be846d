// Wire-format parsing of Solana transactions and messages (legacy and v0).
import { b58encode } from './base58.js';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const ED25519_PROGRAM = 'Ed25519SigVerify111111111111111111111111111';
export const SECP256K1_PROGRAM = 'KeccakSecp256k11111111111111111111111111111';
export const SECP256R1_PROGRAM = 'Secp256r1SigVerify1111111111111111111111111';
export const LAMPORTS_PER_SIGNATURE = 5000n;
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
export const PACKET_DATA_SIZE = 1232;

export class TxFormatError extends Error {}

function readCompactU16(buf, off) {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    if (off >= buf.length) throw new TxFormatError('io error: failed to fill whole buffer');
    const b = buf[off++];
    value |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return [value, off];
  }
  throw new TxFormatError('compact-u16 overflow');
}

function take(buf, off, n) {
  if (off + n > buf.length) throw new TxFormatError('io error: failed to fill whole buffer');
  return buf.subarray(off, off + n);
}

/** Parses a message starting at `off` in `buf`. */
export function parseMessage(buf, off = 0) {
  const start = off;
  let version = 'legacy';
  if (off >= buf.length) throw new TxFormatError('io error: failed to fill whole buffer');
  if (buf[off] & 0x80) {
    const v = buf[off] & 0x7f;
    if (v !== 0) throw new TxFormatError(`unsupported transaction version ${v}`);
    version = 0;
    off++;
  }
  const h = take(buf, off, 3);
  off += 3;
  const header = {
    numRequiredSignatures: h[0],
    numReadonlySignedAccounts: h[1],
    numReadonlyUnsignedAccounts: h[2],
  };
  let n;
  [n, off] = readCompactU16(buf, off);
  const staticKeys = [];
  for (let i = 0; i < n; i++) {
    staticKeys.push(take(buf, off, 32));
    off += 32;
  }
  const blockhashOffset = off - start;
  const recentBlockhash = take(buf, off, 32);
  off += 32;
  [n, off] = readCompactU16(buf, off);
  const instructions = [];
  for (let i = 0; i < n; i++) {
    const programIdIndex = take(buf, off, 1)[0];
    off++;
    let na;
    [na, off] = readCompactU16(buf, off);
    const accounts = Array.from(take(buf, off, na));
    off += na;
    let nd;
    [nd, off] = readCompactU16(buf, off);
    const data = take(buf, off, nd);
    off += nd;
    instructions.push({ programIdIndex, accounts, data });
  }
  const addressTableLookups = [];
  if (version === 0) {
    [n, off] = readCompactU16(buf, off);
    for (let i = 0; i < n; i++) {
      const accountKey = take(buf, off, 32);
      off += 32;
      let nw;
      [nw, off] = readCompactU16(buf, off);
      const writableIndexes = Array.from(take(buf, off, nw));
      off += nw;
      let nr;
      [nr, off] = readCompactU16(buf, off);
      const readonlyIndexes = Array.from(take(buf, off, nr));
      off += nr;
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  const msg = {
    version,
    header,
    staticKeys,
    staticKeysB58: staticKeys.map(b58encode),
    recentBlockhash: b58encode(recentBlockhash),
    blockhashOffset,
    instructions,
    addressTableLookups,
    numLoaded: addressTableLookups.reduce((s, l) => s + l.writableIndexes.length + l.readonlyIndexes.length, 0),
    end: off,
  };
  sanitizeMessage(msg);
  return msg;
}

export class TxSanitizeError extends Error {}

function sanitizeMessage(msg) {
  const { header, staticKeys, instructions } = msg;
  const total = staticKeys.length + msg.numLoaded;
  const bad = () => {
    throw new TxSanitizeError('Transaction failed to sanitize accounts offsets correctly');
  };
  if (header.numRequiredSignatures === 0) bad();
  if (header.numRequiredSignatures > staticKeys.length) bad();
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures) bad();
  if (header.numReadonlyUnsignedAccounts > staticKeys.length - header.numRequiredSignatures) bad();
  if (total > 256) bad();
  for (const ix of instructions) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= staticKeys.length) bad();
    for (const a of ix.accounts) if (a >= total) bad();
  }
  const seen = new Set(msg.staticKeysB58);
  if (seen.size !== staticKeys.length) bad();
}

/** Parses a full wire transaction. */
export function parseTransaction(bytes) {
  let [n, off] = readCompactU16(bytes, 0);
  const signatures = [];
  for (let i = 0; i < n; i++) {
    signatures.push(take(bytes, off, 64));
    off += 64;
  }
  const messageOffset = off;
  const message = parseMessage(bytes, off);
  if (message.end !== bytes.length) {
    // trailing bytes are tolerated by bincode; keep the message slice exact
  }
  if (signatures.length !== message.header.numRequiredSignatures) {
    throw new TxSanitizeError('Transaction failed to sanitize accounts offsets correctly');
  }
  return {
    signatures,
    signature: signatures.length ? b58encode(signatures[0]) : null,
    messageOffset,
    messageBytes: bytes.subarray(messageOffset, message.end),
    message,
    bytes,
  };
}

/** Whether static account `i` is writable according to the header. */
export function isStaticWritable(msg, i) {
  const { numRequiredSignatures: s, numReadonlySignedAccounts: rs, numReadonlyUnsignedAccounts: ru } = msg.header;
  if (i < s) return i < s - rs;
  return i < msg.staticKeys.length - ru;
}

/** Whether account `i` of the full key list (static + loaded) is a signer. */
export function isSigner(msg, i) {
  return i < msg.header.numRequiredSignatures;
}

/**
 * Fee the runtime charges for a message: 5000 lamports per signature
 * (including precompile signatures) plus the prioritization fee
 * ceil(cuPrice * cuLimit / 1e6).
 */
export function computeFee(msg, isBuiltinProgram) {
  let sigs = msg.header.numRequiredSignatures;
  let price = 0n;
  let limit = null;
  let defaultLimit = 0;
  for (const ix of msg.instructions) {
    const pid = msg.staticKeysB58[ix.programIdIndex];
    const d = ix.data;
    if (pid === COMPUTE_BUDGET_PROGRAM) {
      if (d[0] === 2 && d.length >= 5) limit = new DataView(d.buffer, d.byteOffset + 1, 4).getUint32(0, true);
      else if (d[0] === 3 && d.length >= 9) price = new DataView(d.buffer, d.byteOffset + 1, 8).getBigUint64(0, true);
    } else if ((pid === ED25519_PROGRAM || pid === SECP256K1_PROGRAM || pid === SECP256R1_PROGRAM) && d.length > 0) {
      sigs += d[0];
    }
    defaultLimit += pid === COMPUTE_BUDGET_PROGRAM || isBuiltinProgram(pid) ? 3000 : 200_000;
  }
  const cuLimit = Math.min(limit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT);
  const prio = (price * BigInt(cuLimit) + 999_999n) / 1_000_000n;
  return { fee: LAMPORTS_PER_SIGNATURE * BigInt(sigs) + prio, cuPrice: price, cuLimit };
}

function compactU16(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** Legacy message: `from` transfers `lamports` to `to` via the System program. */
export function buildTransferMessage(from, to, lamports, blockhash) {
  const data = new Uint8Array(12);
  const dv = new DataView(data.buffer);
  dv.setUint32(0, 2, true);
  dv.setBigUint64(4, lamports, true);
  return Uint8Array.from([
    1, 0, 1,
    ...compactU16(3), ...from, ...to, ...new Uint8Array(32),
    ...blockhash,
    ...compactU16(1), 2, ...compactU16(2), 0, 1, ...compactU16(data.length), ...data,
  ]);
}

export function buildTransaction(signatures, messageBytes) {
  return Uint8Array.from([...compactU16(signatures.length), ...signatures.flatMap((s) => [...s]), ...messageBytes]);
}
