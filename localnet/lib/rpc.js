// Solana JSON-RPC 2.0 method handlers (agave-compatible shapes), cheat codes
// and fault injection.
import { b58decode, b58encode, tryDecodePubkey } from './base58.js';
import { RpcError, invalidParams, invalidRequest, txErrorMessage } from './errors.js';
import { parseTransaction, parseMessage, TxFormatError, TxSanitizeError, PACKET_DATA_SIZE } from './tx.js';
import { verify } from './keys.js';
import { zstdFrameRaw } from './zstd.js';
import {
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  STATE_CODES,
  isTokenProgram,
  unpackTokenAccount,
  unpackMint,
  uiTokenAmount,
  parseTokenAccountJson,
} from './token.js';
import { encodeTransaction } from './txjson.js';
import { ALT_PROGRAM, parseLookupTableJson } from './alt.js';
import { MINT_AUTHORITY, GENESIS_HASH, IDENTITY, USDC_MAINNET, USDC_DEVNET } from './chain.js';

export const SOLANA_CORE_VERSION = '2.2.20';
export const FEATURE_SET = 3073396398;
const MAX_BASE58_BYTES = 128;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURE_STATUSES = 256;
const U64_MAX = (1n << 64n) - 1n;

const ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];

export const DEFAULT_FAULTS = Object.freeze({ latencyMs: 0, dropRate: 0, failSends: false, down: false, historySlot: null });

/** Methods that are never delayed, failed or taken down by faults. */
export const isExemptMethod = (m) => typeof m === 'string' && (m.startsWith('localnet_') || m.startsWith('surfnet_'));

export class Rpc {
  constructor(chain, { log = () => {}, random = Math.random } = {}) {
    this.chain = chain;
    this.log = log;
    this.random = random;
    this.faults = { ...DEFAULT_FAULTS };
    this.calls = new Map(); // method -> count, for localnet_getStats
  }

  ctx() {
    return { apiVersion: SOLANA_CORE_VERSION, slot: this.chain.slot };
  }

  withContext(value) {
    return { context: this.ctx(), value };
  }

  /**
   * The slot the history methods (getSignatureStatuses, getTransaction,
   * getSignaturesForAddress) answer from: the chain's, or with the
   * historySlot fault a backend stuck at that slot, which knows nothing
   * that landed after it.
   */
  historySlot() {
    const h = this.faults.historySlot;
    return h === null ? this.chain.slot : Math.min(h, this.chain.slot);
  }

  /** Handles one JSON-RPC request object; returns the response object or null for notifications. */
  async handle(req) {
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      return { jsonrpc: '2.0', error: invalidRequest().toJSON(), id: null };
    }
    const id = req.id === undefined ? null : req.id;
    const isNotification = !('id' in req);
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
      return { jsonrpc: '2.0', error: invalidRequest().toJSON(), id };
    }
    if (req.params !== undefined && req.params !== null && typeof req.params !== 'object') {
      return { jsonrpc: '2.0', error: invalidRequest().toJSON(), id };
    }
    const fn = Object.hasOwn(METHODS, req.method) ? METHODS[req.method] : null;
    if (fn && !isExemptMethod(req.method)) this.calls.set(req.method, (this.calls.get(req.method) ?? 0) + 1);
    let resp;
    if (!fn) {
      resp = { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id };
    } else {
      try {
        const result = await fn.call(this, req.params ?? [], req.method);
        resp = { jsonrpc: '2.0', result: result === undefined ? null : result, id };
      } catch (e) {
        if (e instanceof RpcError) resp = { jsonrpc: '2.0', error: e.toJSON(), id };
        else {
          this.log(`internal error in ${req.method}: ${e?.stack ?? e}`);
          resp = { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id };
        }
      }
    }
    return isNotification ? null : resp;
  }

  // --------------------------------------------------------------- helpers

  account(address) {
    return this.chain.getAccount(address);
  }

  encodeAccount(acc, encoding, dataSlice) {
    let data;
    const full = acc.data;
    let slice = full;
    if (dataSlice && encoding !== 'jsonParsed') {
      const off = Math.min(Number(dataSlice.offset ?? 0), full.length);
      const len = Number(dataSlice.length ?? 0);
      slice = full.subarray(off, Math.min(full.length, off + len));
    }
    switch (encoding) {
      case 'binary':
      case 'base58':
        if (slice.length > MAX_BASE58_BYTES) {
          throw new RpcError(
            -32600,
            `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`,
          );
        }
        data = encoding === 'binary' ? b58encode(slice) : [b58encode(slice), 'base58'];
        break;
      case 'base64':
        data = [Buffer.from(slice).toString('base64'), 'base64'];
        break;
      case 'base64+zstd':
        data = [Buffer.from(zstdFrameRaw(slice)).toString('base64'), 'base64+zstd'];
        break;
      case 'jsonParsed': {
        let parsed = null;
        if (isTokenProgram(acc.owner)) parsed = parseTokenAccountJson(acc.owner, full, (m) => this.chain.getMint(m));
        else if (acc.owner === ALT_PROGRAM) parsed = parseLookupTableJson(full);
        data = parsed ?? [Buffer.from(full).toString('base64'), 'base64'];
        break;
      }
      default:
        throw invalidParams(`Invalid params: unknown variant \`${encoding}\`, expected one of ${ENCODINGS.map((e) => `\`${e}\``).join(', ')}.`);
    }
    return {
      data,
      executable: acc.executable,
      lamports: acc.lamports,
      owner: acc.owner,
      rentEpoch: acc.rentEpoch,
      space: full.length,
    };
  }

  /** Encoding + dataSlice from a config object with a per-method default. */
  accountEncoding(cfg, dflt) {
    const encoding = cfg.encoding ?? dflt;
    if (!ENCODINGS.includes(encoding)) {
      throw invalidParams(`Invalid params: unknown variant \`${encoding}\`, expected one of ${ENCODINGS.map((e) => `\`${e}\``).join(', ')}.`);
    }
    return { encoding, dataSlice: cfg.dataSlice ?? null };
  }

  decodeWireTx(str, encoding) {
    if (typeof str !== 'string') throw invalidParams('Invalid params: invalid type: expected a string.');
    let bytes;
    if (encoding === 'base58') {
      if (str.length > 1683) {
        throw invalidParams(`base58 encoded solana_transaction::versioned::VersionedTransaction too large: ${str.length} bytes (max: encoded/raw 1683/${PACKET_DATA_SIZE})`);
      }
      try {
        bytes = b58decode(str);
      } catch (e) {
        throw invalidParams(`invalid base58 encoding: ${e.message}`);
      }
    } else if (encoding === 'base64') {
      if (str.length > 1644) {
        throw invalidParams(`base64 encoded solana_transaction::versioned::VersionedTransaction too large: ${str.length} bytes (max: encoded/raw 1644/${PACKET_DATA_SIZE})`);
      }
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(str)) throw invalidParams('invalid base64 encoding: Invalid byte');
      bytes = new Uint8Array(Buffer.from(str, 'base64'));
    } else {
      throw invalidParams(`Invalid params: unknown variant \`${encoding}\`, expected \`base58\` or \`base64\`.`);
    }
    if (bytes.length > PACKET_DATA_SIZE) {
      throw invalidParams(`decoded solana_transaction::versioned::VersionedTransaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
    }
    try {
      return parseTransaction(bytes);
    } catch (e) {
      if (e instanceof TxSanitizeError) throw invalidParams(`invalid transaction: ${e.message}`);
      if (e instanceof TxFormatError) {
        throw invalidParams(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${e.message}`);
      }
      throw e;
    }
  }

  verifySignatures(parsed) {
    const msg = parsed.message;
    for (let i = 0; i < parsed.signatures.length; i++) {
      if (!verify(msg.staticKeys[i], parsed.messageBytes, parsed.signatures[i])) return false;
    }
    return true;
  }

  simulationValue(sim, extra = {}) {
    return {
      accounts: null,
      err: sim.err,
      innerInstructions: null,
      logs: sim.logs,
      replacementBlockhash: null,
      returnData: sim.returnData,
      unitsConsumed: sim.unitsConsumed,
      ...extra,
    };
  }

  preflightError(sim) {
    return new RpcError(-32002, `Transaction simulation failed: ${txErrorMessage(sim.err)}`, this.simulationValue(sim));
  }
}

// ------------------------------------------------------------ param helpers

function arr(params, method) {
  if (!Array.isArray(params)) throw invalidParams(`Invalid params: invalid type: map, expected a sequence (${method}).`);
  return params;
}

function cfgAt(params, i) {
  const c = params[i];
  if (c === undefined || c === null) return {};
  if (typeof c !== 'object' || Array.isArray(c)) throw invalidParams('Invalid params: invalid type: expected a config object.');
  return c;
}

function pubkeyParam(v) {
  if (typeof v !== 'string') throw invalidParams('Invalid params: invalid type: expected a base58 pubkey string.');
  if (tryDecodePubkey(v)) return v;
  let bytes;
  try {
    bytes = b58decode(v);
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  throw invalidParams(bytes.length !== 32 ? 'Invalid param: WrongSize' : 'Invalid param: Invalid');
}

function requiredParam(params, i, what) {
  if (params[i] === undefined) throw invalidParams(`Invalid params: missing ${what}.`);
  return params[i];
}

/** Parses a u64 from a JSON number or decimal string. */
export function u64Param(v, what) {
  let b;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) b = BigInt(v);
  else if (typeof v === 'string' && /^\d+$/.test(v)) b = BigInt(v);
  else if (typeof v === 'bigint') b = v;
  else throw invalidParams(`Invalid params: invalid value for ${what}: expected u64.`);
  if (b > U64_MAX) throw invalidParams(`Invalid params: invalid value for ${what}: expected u64.`);
  return b;
}

function commitmentOf(cfg, dflt = 'finalized') {
  const c = cfg.commitment ?? dflt;
  const map = { processed: 'processed', confirmed: 'confirmed', finalized: 'finalized', recent: 'processed', single: 'confirmed', singleGossip: 'confirmed', root: 'finalized', max: 'finalized' };
  if (!map[c]) throw invalidParams(`Invalid params: unknown variant \`${c}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`);
  return map[c];
}

function checkMinContextSlot(self, cfg) {
  if (cfg.minContextSlot !== undefined && cfg.minContextSlot !== null && Number(cfg.minContextSlot) > self.chain.slot) {
    throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: self.chain.slot });
  }
}

/** Decodes surfnet_setAccount `data`: hex string (surfpool), [str, enc] pair, or byte array. */
function decodeAccountData(v) {
  if (typeof v === 'string') {
    const s = v.startsWith('0x') ? v.slice(2) : v;
    if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw invalidParams('Invalid hex data provided: Invalid string length or character');
    return new Uint8Array(Buffer.from(s, 'hex'));
  }
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') {
    const [s, enc] = v;
    if (enc === 'base64') return new Uint8Array(Buffer.from(s, 'base64'));
    if (enc === 'base58') {
      try {
        return b58decode(s);
      } catch {
        throw invalidParams('Invalid base58 data provided');
      }
    }
    if (enc === 'hex') return decodeAccountData(s);
    throw invalidParams(`Invalid data encoding \`${enc}\`, expected base64, base58 or hex`);
  }
  if (Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0 && x < 256)) return Uint8Array.from(v);
  throw invalidParams('Invalid params: data must be a hex string, [string, encoding] or a byte array');
}

/** SetSomeAccount: pubkey string, or "null" to clear. undefined/null = unchanged. */
function someAccount(v, what) {
  if (v === undefined || v === null) return undefined;
  if (v === 'null') return null;
  return b58decode(pubkeyParam(v, what));
}

// ------------------------------------------------------------------ methods

const METHODS = {
  getHealth() {
    return 'ok';
  },

  getVersion() {
    return { 'feature-set': FEATURE_SET, 'solana-core': SOLANA_CORE_VERSION };
  },

  getGenesisHash() {
    return GENESIS_HASH;
  },

  getIdentity() {
    return { identity: IDENTITY };
  },

  getSlot(params) {
    checkMinContextSlot(this, cfgAt(arr(params, 'getSlot'), 0));
    return this.chain.slot;
  },

  getBlockHeight(params) {
    checkMinContextSlot(this, cfgAt(arr(params, 'getBlockHeight'), 0));
    return this.chain.blockHeight;
  },

  getTransactionCount() {
    return this.chain.transactionCount;
  },

  getFirstAvailableBlock() {
    return 0;
  },

  minimumLedgerSlot() {
    return 0;
  },

  getEpochInfo() {
    const slotsInEpoch = 432000;
    return {
      absoluteSlot: this.chain.slot,
      blockHeight: this.chain.blockHeight,
      epoch: Math.floor(this.chain.slot / slotsInEpoch),
      slotIndex: this.chain.slot % slotsInEpoch,
      slotsInEpoch,
      transactionCount: this.chain.transactionCount,
    };
  },

  getEpochSchedule() {
    return { firstNormalEpoch: 0, firstNormalSlot: 0, leaderScheduleSlotOffset: 432000, slotsPerEpoch: 432000, warmup: false };
  },

  getBlockTime(params) {
    const slot = Number(requiredParam(arr(params, 'getBlockTime'), 0, 'slot'));
    if (!Number.isInteger(slot) || slot < 0 || slot > this.chain.slot) {
      throw new RpcError(-32004, `Block not available for slot ${slot}`);
    }
    const ageSec = ((this.chain.slot - slot) * 400) / 1000;
    return Math.floor(Date.now() / 1000 - ageSec);
  },

  getLatestBlockhash(params) {
    checkMinContextSlot(this, cfgAt(arr(params, 'getLatestBlockhash'), 0));
    return this.withContext(this.chain.latestBlockhash());
  },

  isBlockhashValid(params) {
    params = arr(params, 'isBlockhashValid');
    const h = requiredParam(params, 0, 'blockhash');
    if (!tryDecodePubkey(h)) throw invalidParams('Invalid param: Invalid');
    checkMinContextSlot(this, cfgAt(params, 1));
    return this.withContext(this.chain.isBlockhashValid(h));
  },

  getBalance(params) {
    params = arr(params, 'getBalance');
    const a = pubkeyParam(requiredParam(params, 0, 'pubkey'));
    checkMinContextSlot(this, cfgAt(params, 1));
    return this.withContext(this.chain.balanceOf(a));
  },

  getAccountInfo(params) {
    params = arr(params, 'getAccountInfo');
    const a = pubkeyParam(requiredParam(params, 0, 'pubkey'));
    const cfg = cfgAt(params, 1);
    checkMinContextSlot(this, cfg);
    const { encoding, dataSlice } = this.accountEncoding(cfg, 'binary');
    const acc = this.account(a);
    return this.withContext(acc ? this.encodeAccount(acc, encoding, dataSlice) : null);
  },

  getMultipleAccounts(params) {
    params = arr(params, 'getMultipleAccounts');
    const list = requiredParam(params, 0, 'pubkeys');
    if (!Array.isArray(list)) throw invalidParams('Invalid params: invalid type: expected a sequence of pubkeys.');
    if (list.length > MAX_MULTIPLE_ACCOUNTS) throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const keys = list.map((k) => pubkeyParam(k));
    const cfg = cfgAt(params, 1);
    checkMinContextSlot(this, cfg);
    const { encoding, dataSlice } = this.accountEncoding(cfg, 'base64');
    return this.withContext(
      keys.map((k) => {
        const acc = this.account(k);
        return acc ? this.encodeAccount(acc, encoding, dataSlice) : null;
      }),
    );
  },

  getProgramAccounts(params) {
    params = arr(params, 'getProgramAccounts');
    const program = pubkeyParam(requiredParam(params, 0, 'program id'));
    const cfg = cfgAt(params, 1);
    const { encoding, dataSlice } = this.accountEncoding(cfg, 'binary');
    const filters = cfg.filters ?? [];
    const matchers = filters.map(compileFilter);
    const out = [];
    for (const ea of this.chain.svm.getProgramAccounts(program)) {
      const acc = this.account(ea.address);
      if (!acc) continue;
      if (!matchers.every((m) => m(acc.data))) continue;
      out.push({ account: this.encodeAccount(acc, encoding, dataSlice), pubkey: ea.address });
    }
    return cfg.withContext ? this.withContext(out) : out;
  },

  getMinimumBalanceForRentExemption(params) {
    params = arr(params, 'getMinimumBalanceForRentExemption');
    const len = params[0] === undefined ? 0n : u64Param(params[0], 'data length');
    if (len > 10n * 1024n * 1024n) throw invalidParams('Invalid params: data length too large');
    return this.chain.rentExempt(Number(len));
  },

  getFeeForMessage(params) {
    params = arr(params, 'getFeeForMessage');
    const s = requiredParam(params, 0, 'message');
    if (typeof s !== 'string') throw invalidParams('Invalid params: invalid type: expected a base64 string.');
    let msg;
    try {
      const bytes = new Uint8Array(Buffer.from(s, 'base64'));
      msg = parseMessage(bytes, 0);
    } catch (e) {
      throw invalidParams(`invalid message: ${e.message}`);
    }
    const valid = this.chain.isMessageLifetimeValid(msg);
    return this.withContext(valid ? this.chain.fee(msg).fee : null);
  },

  getRecentPrioritizationFees(params) {
    params = arr(params, 'getRecentPrioritizationFees');
    const list = params[0] ?? [];
    if (!Array.isArray(list)) throw invalidParams('Invalid params: invalid type: expected a sequence of pubkeys.');
    if (list.length > 128) throw invalidParams('Too many inputs provided; max 128');
    return this.chain.recentPrioritizationFees(list.map((k) => pubkeyParam(k)));
  },

  getTokenAccountBalance(params) {
    params = arr(params, 'getTokenAccountBalance');
    const a = pubkeyParam(requiredParam(params, 0, 'pubkey'));
    const acc = this.account(a);
    if (!acc) throw invalidParams('Invalid param: could not find account');
    if (!isTokenProgram(acc.owner)) throw invalidParams('Invalid param: not a Token account');
    const t = unpackTokenAccount(acc.owner, acc.data);
    if (!t) throw invalidParams('Invalid param: not a Token account');
    const m = this.chain.getMint(t.mint);
    if (!m) throw invalidParams('Invalid param: could not find mint');
    return this.withContext(uiTokenAmount(t.amount, m.decimals));
  },

  getTokenSupply(params) {
    params = arr(params, 'getTokenSupply');
    const a = pubkeyParam(requiredParam(params, 0, 'mint'));
    const acc = this.account(a);
    if (!acc) throw invalidParams('Invalid param: could not find account');
    if (!isTokenProgram(acc.owner)) throw invalidParams('Invalid param: not a Token mint');
    const m = unpackMint(acc.owner, acc.data);
    if (!m) throw invalidParams('Invalid param: not a Token mint');
    return this.withContext(uiTokenAmount(m.supply, m.decimals));
  },

  getTokenAccountsByOwner(params) {
    params = arr(params, 'getTokenAccountsByOwner');
    const owner = pubkeyParam(requiredParam(params, 0, 'owner'));
    const filter = requiredParam(params, 1, 'filter');
    const cfg = cfgAt(params, 2);
    const { encoding, dataSlice } = this.accountEncoding(cfg, 'binary');
    let programs;
    let mint = null;
    if (filter && typeof filter.mint === 'string') {
      mint = pubkeyParam(filter.mint);
      const macc = this.account(mint);
      if (!macc || !isTokenProgram(macc.owner)) throw invalidParams('Invalid param: could not find mint');
      programs = [macc.owner];
    } else if (filter && typeof filter.programId === 'string') {
      const p = pubkeyParam(filter.programId);
      if (!isTokenProgram(p)) throw invalidParams('Invalid param: unrecognized Token program id');
      programs = [p];
    } else {
      throw invalidParams('Invalid params: expected {"mint": ...} or {"programId": ...}');
    }
    const out = [];
    for (const p of programs) {
      for (const ea of this.chain.svm.getProgramAccounts(p)) {
        const acc = this.account(ea.address);
        if (!acc) continue;
        const t = unpackTokenAccount(acc.owner, acc.data);
        if (!t || t.owner !== owner || (mint && t.mint !== mint)) continue;
        out.push({ account: this.encodeAccount(acc, encoding, dataSlice), pubkey: ea.address });
      }
    }
    return this.withContext(out);
  },

  requestAirdrop(params) {
    params = arr(params, 'requestAirdrop');
    const a = pubkeyParam(requiredParam(params, 0, 'pubkey'));
    const lamports = u64Param(requiredParam(params, 1, 'lamports'), 'lamports');
    try {
      return this.chain.airdrop(a, lamports);
    } catch (e) {
      throw new RpcError(-32600, `airdrop request failed: ${e.message}`);
    }
  },

  sendTransaction(params) {
    params = arr(params, 'sendTransaction');
    const cfg = cfgAt(params, 1);
    const encoding = cfg.encoding ?? 'base58';
    const parsed = this.decodeWireTx(requiredParam(params, 0, 'transaction'), encoding);
    if (this.faults.failSends) {
      throw new RpcError(-32005, 'Node is unhealthy', { numSlotsBehind: null });
    }
    const sig = parsed.signature;
    if (this.chain.txs.has(sig)) return sig; // already processed: same signature, no re-execution
    const preflight = !cfg.skipPreflight;
    const sigOk = this.verifySignatures(parsed);
    const lifetimeOk = this.chain.isMessageLifetimeValid(parsed.message);
    if (preflight) {
      commitmentOf({ commitment: cfg.preflightCommitment }, 'finalized');
      if (!sigOk) throw new RpcError(-32003, 'Transaction signature verification failure');
      if (!lifetimeOk) {
        throw this.preflightError({ err: 'BlockhashNotFound', logs: [], unitsConsumed: 0, returnData: null });
      }
      const sim = this.chain.simulate(parsed, { sigverify: false });
      if (sim.err) throw this.preflightError(sim);
    } else if (!sigOk || !lifetimeOk) {
      this.log(`dropped ${sig.slice(0, 8)}…: ${!sigOk ? 'bad signature' : 'blockhash not found'}`);
      return sig; // a cluster would drop it silently
    }
    const minFee = this.chain.minPriorityFee;
    if (minFee > 0n) {
      const { cuPrice } = this.chain.fee(parsed.message);
      if (cuPrice < minFee) {
        // A congested market: accepted, but no leader includes it.
        this.log(`market: dropped ${sig.slice(0, 8)}…: ${cuPrice} µlamports/CU is below ${minFee}`);
        return sig;
      }
    }
    if (this.faults.dropRate > 0 && this.random() < this.faults.dropRate) {
      this.log(`fault: dropped ${sig.slice(0, 8)}…`);
      return sig;
    }
    const r = this.chain.execute(parsed);
    if (!r.included) {
      if (preflight) throw this.preflightError({ err: r.err, logs: r.logs, unitsConsumed: r.unitsConsumed, returnData: null });
      this.log(`dropped ${sig.slice(0, 8)}…: ${JSON.stringify(r.err)}`);
    }
    return sig;
  },

  simulateTransaction(params) {
    params = arr(params, 'simulateTransaction');
    const cfg = cfgAt(params, 1);
    const encoding = cfg.encoding ?? 'base58';
    const sigVerify = !!cfg.sigVerify;
    const replace = !!cfg.replaceRecentBlockhash;
    if (sigVerify && replace) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
    checkMinContextSlot(this, cfg);
    let parsed = this.decodeWireTx(requiredParam(params, 0, 'transaction'), encoding);
    let replacementBlockhash = null;
    if (replace) {
      const latest = this.chain.latestBlockhash();
      const bytes = Uint8Array.from(parsed.bytes);
      bytes.set(b58decode(latest.blockhash), parsed.messageOffset + parsed.message.blockhashOffset);
      parsed = parseTransaction(bytes);
      replacementBlockhash = latest;
    }
    if (sigVerify && !this.verifySignatures(parsed)) {
      throw new RpcError(-32003, 'Transaction signature verification failure');
    }
    let sim;
    if (!replace && !this.chain.isMessageLifetimeValid(parsed.message)) {
      sim = { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0, returnData: null, innerInstructions: [], postAccounts: new Map() };
    } else {
      sim = this.chain.simulate(parsed, { sigverify: false });
    }
    let accounts = null;
    if (cfg.accounts && Array.isArray(cfg.accounts.addresses)) {
      const { encoding: accEnc } = this.accountEncoding(cfg.accounts, 'base64');
      if (accEnc === 'binary') throw invalidParams('Invalid params: binary encoding is not supported for simulation accounts');
      accounts = cfg.accounts.addresses.map((a) => {
        pubkeyParam(a);
        const acc = sim.err ? null : sim.postAccounts.get(a) ?? this.account(a);
        return acc && acc.lamports > 0n ? this.encodeAccount(acc, accEnc, null) : null;
      });
    }
    return this.withContext(
      this.simulationValue(sim, {
        accounts,
        innerInstructions: cfg.innerInstructions ? sim.innerInstructions : null,
        replacementBlockhash,
      }),
    );
  },

  getSignatureStatuses(params) {
    params = arr(params, 'getSignatureStatuses');
    const sigs = requiredParam(params, 0, 'signatures');
    if (!Array.isArray(sigs)) throw invalidParams('Invalid params: invalid type: expected a sequence of signatures.');
    if (sigs.length > MAX_SIGNATURE_STATUSES) throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
    for (const s of sigs) signatureParam(s);
    const at = this.historySlot();
    return { context: { ...this.ctx(), slot: at }, value: sigs.map((s) => this.chain.signatureStatus(s, at)) };
  },

  getTransaction(params) {
    params = arr(params, 'getTransaction');
    const sig = signatureParam(requiredParam(params, 0, 'signature'));
    // the second parameter may be a bare encoding string (legacy form)
    const cfg = typeof params[1] === 'string' ? { encoding: params[1] } : cfgAt(params, 1);
    const commitment = commitmentOf(cfg);
    if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
    const encoding = cfg.encoding ?? 'json';
    if (!['json', 'jsonParsed', 'base58', 'base64'].includes(encoding)) {
      throw invalidParams(`Invalid params: unknown variant \`${encoding}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\`.`);
    }
    const rec = this.chain.txs.get(sig);
    if (!rec || !this.chain.visibleAt(rec, commitment, this.historySlot())) return null;
    const maxVersion = cfg.maxSupportedTransactionVersion;
    if (rec.version !== 'legacy' && (maxVersion === undefined || maxVersion === null || maxVersion < rec.version)) {
      throw new RpcError(
        -32015,
        `Transaction version (${rec.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${rec.version}`,
      );
    }
    return encodeTransaction(rec, encoding, maxVersion !== undefined && maxVersion !== null, (m) => this.chain.getMint(m));
  },

  getSignaturesForAddress(params) {
    params = arr(params, 'getSignaturesForAddress');
    const a = pubkeyParam(requiredParam(params, 0, 'address'));
    const cfg = cfgAt(params, 1);
    const commitment = commitmentOf(cfg);
    if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
    const limit = cfg.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidParams('Invalid limit; max 1000');
    const before = cfg.before ? signatureParam(cfg.before) : null;
    const until = cfg.until ? signatureParam(cfg.until) : null;
    const at = this.historySlot();
    if (cfg.minContextSlot !== undefined && cfg.minContextSlot !== null && Number(cfg.minContextSlot) > at) {
      throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: at });
    }
    const list = this.chain.addrIndex.get(a) ?? [];
    const out = [];
    let started = before === null;
    for (let i = list.length - 1; i >= 0 && out.length < limit; i--) {
      const sig = list[i];
      if (!started) {
        if (sig === before) started = true;
        continue;
      }
      if (sig === until) break;
      const rec = this.chain.txs.get(sig);
      if (!rec || !this.chain.visibleAt(rec, commitment, at)) continue;
      const st = this.chain.signatureStatus(sig, at);
      out.push({
        blockTime: rec.blockTime,
        confirmationStatus: st.confirmationStatus,
        err: rec.err,
        memo: rec.memo,
        signature: sig,
        slot: rec.slot,
      });
    }
    return out;
  },

  // ------------------------------------------------------------ cheat codes

  surfnet_setAccount(params) {
    params = arr(params, 'surfnet_setAccount');
    const a = pubkeyParam(requiredParam(params, 0, 'pubkey'));
    const u = cfgAt(params, 1);
    const cur = this.chain.getAccount(a) ?? {
      lamports: 0n,
      data: new Uint8Array(0),
      owner: '11111111111111111111111111111111',
      executable: false,
      rentEpoch: 0n,
    };
    const next = { ...cur };
    if (u.lamports !== undefined && u.lamports !== null) next.lamports = u64Param(u.lamports, 'lamports');
    if (u.data !== undefined && u.data !== null) next.data = decodeAccountData(u.data);
    if (u.owner !== undefined && u.owner !== null) next.owner = pubkeyParam(u.owner);
    if (u.executable !== undefined && u.executable !== null) next.executable = !!u.executable;
    const re = u.rentEpoch ?? u.rent_epoch;
    if (re !== undefined && re !== null) next.rentEpoch = u64Param(re, 'rentEpoch');
    this.chain.setAccount(a, next);
    return this.withContext(null);
  },

  async surfnet_setTokenAccount(params) {
    params = arr(params, 'surfnet_setTokenAccount');
    const owner = pubkeyParam(requiredParam(params, 0, 'owner'));
    const mint = pubkeyParam(requiredParam(params, 1, 'mint'));
    const u = cfgAt(params, 2);
    const tokenProgram = params[3] ? pubkeyParam(params[3]) : TOKEN_PROGRAM;
    if (tokenProgram !== TOKEN_PROGRAM && tokenProgram !== TOKEN_2022_PROGRAM) {
      throw invalidParams('Invalid param: unrecognized Token program id');
    }
    const update = {};
    if (u.amount !== undefined && u.amount !== null) update.amount = u64Param(u.amount, 'amount');
    const delegate = someAccount(u.delegate, 'delegate');
    if (delegate !== undefined) update.delegate = delegate;
    if (u.state !== undefined && u.state !== null) {
      if (!(u.state in STATE_CODES)) throw invalidParams(`Invalid account state: ${u.state}`);
      update.state = STATE_CODES[u.state];
    }
    const da = u.delegatedAmount ?? u.delegated_amount;
    if (da !== undefined && da !== null) update.delegatedAmount = u64Param(da, 'delegatedAmount');
    const ca = someAccount(u.closeAuthority ?? u.close_authority, 'closeAuthority');
    if (ca !== undefined) update.closeAuthority = ca;
    await this.chain.setTokenAccount(owner, mint, update, tokenProgram);
    return this.withContext(null);
  },

  // ------------------------------------------------------- localnet extras

  localnet_setFaults(params) {
    const f = (Array.isArray(params) ? params[0] : params) ?? {};
    if (typeof f !== 'object') throw invalidParams('Invalid params: expected a faults object');
    const next = { ...DEFAULT_FAULTS };
    if (f.latencyMs !== undefined && f.latencyMs !== null) {
      const v = Number(f.latencyMs);
      if (!Number.isFinite(v) || v < 0 || v > 600000) throw invalidParams('Invalid params: latencyMs must be 0..600000');
      next.latencyMs = v;
    }
    if (f.dropRate !== undefined && f.dropRate !== null) {
      const v = Number(f.dropRate);
      if (!Number.isFinite(v) || v < 0 || v > 1) throw invalidParams('Invalid params: dropRate must be within 0..1');
      next.dropRate = v;
    }
    next.failSends = !!f.failSends;
    next.down = !!f.down;
    if (f.historySlot !== undefined && f.historySlot !== null) {
      const v = Number(f.historySlot);
      if (!Number.isInteger(v) || v < 0) throw invalidParams('Invalid params: historySlot must be a slot (an integer ≥ 0)');
      next.historySlot = v;
    }
    this.faults = next;
    this.log(`faults: ${JSON.stringify(next)}`);
    return { ...next };
  },

  localnet_setMarket(params) {
    const m = (Array.isArray(params) ? params[0] : params) ?? {};
    if (typeof m !== 'object') throw invalidParams('Invalid params: expected a market object');
    this.chain.minPriorityFee = m.minPriorityFee === undefined || m.minPriorityFee === null ? 0n : u64Param(m.minPriorityFee, 'minPriorityFee');
    this.log(`market: minimum priority fee ${this.chain.minPriorityFee} µlamports/CU`);
    return METHODS.localnet_getMarket.call(this);
  },

  localnet_getMarket() {
    return { minPriorityFee: this.chain.minPriorityFee };
  },

  localnet_getStats() {
    return { calls: Object.fromEntries([...this.calls].sort(([a], [b]) => (a < b ? -1 : 1))) };
  },

  localnet_resetStats() {
    this.calls.clear();
    return true;
  },

  localnet_getFaults() {
    return { ...this.faults };
  },

  localnet_advance(params) {
    const p = (Array.isArray(params) ? params[0] : params) ?? {};
    const n = typeof p === 'number' ? p : p.slots ?? 1;
    if (!Number.isInteger(n) || n < 0 || n > 1_000_000) throw invalidParams('Invalid params: slots must be an integer 0..1000000');
    this.chain.advance(n);
    return { slot: this.chain.slot, blockHeight: this.chain.blockHeight };
  },

  /** Drops a transaction that is not yet finalized, as a fork that lost would (see Chain.abandon). */
  localnet_abandon(params) {
    const p = (Array.isArray(params) ? params[0] : params) ?? {};
    const sig = signatureParam(typeof p === 'string' ? p : p.signature);
    const why = this.chain.abandonRefusal(sig);
    if (why) throw invalidParams(`Invalid params: cannot abandon ${sig}: ${why}`);
    const r = this.chain.abandon(sig);
    this.log(`abandoned ${sig.slice(0, 8)}… (slot ${r.slot})`);
    return r;
  },

  localnet_getMintAuthority() {
    return {
      pubkey: b58encode(MINT_AUTHORITY.publicKey),
      secretKey: Array.from(MINT_AUTHORITY.secretKey),
      mints: [USDC_MAINNET, USDC_DEVNET],
    };
  },

  localnet_saveState() {
    if (!this.chain.statePath) return false;
    this.chain.save();
    return true;
  },
};

function signatureParam(s) {
  if (typeof s !== 'string') throw invalidParams('Invalid params: invalid type: expected a signature string.');
  let b;
  try {
    b = b58decode(s);
  } catch {
    throw invalidParams('Invalid param: Invalid');
  }
  if (b.length !== 64) throw invalidParams('Invalid param: WrongSize');
  return s;
}

function compileFilter(f) {
  if (f && f.dataSize !== undefined) {
    const n = Number(f.dataSize);
    return (d) => d.length === n;
  }
  if (f && f.memcmp) {
    const off = Number(f.memcmp.offset ?? 0);
    const enc = f.memcmp.encoding ?? 'base58';
    let bytes;
    try {
      bytes = enc === 'base64' ? new Uint8Array(Buffer.from(f.memcmp.bytes, 'base64')) : b58decode(f.memcmp.bytes);
    } catch {
      throw invalidParams('Invalid param: invalid memcmp bytes');
    }
    return (d) => off + bytes.length <= d.length && bytes.every((b, i) => d[off + i] === b);
  }
  if (f && f.tokenAccountState !== undefined) return (d) => d.length >= 165 && d[108] !== 0;
  throw invalidParams('Invalid params: unsupported filter');
}
