// The chain: a LiteSVM instance plus the slot clock, blockhash ages,
// transaction history and persistence that a real cluster provides.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { getProgramDerivedAddress, getAddressEncoder } from '@solana/kit';
import { b58decode, b58encode } from './base58.js';
import { stringify, parse } from './json.js';
import { keypairFromLabel, sign, sha256 } from './keys.js';
import { convertTxError } from './errors.js';
import { ALT_PROGRAM } from './alt.js';
import {
  SYSTEM_PROGRAM,
  parseTransaction,
  computeFee,
  isStaticWritable,
  buildTransferMessage,
  buildTransaction,
} from './tx.js';
import {
  TOKEN_PROGRAM,
  ATA_PROGRAM,
  NATIVE_MINT,
  TOKEN_ACCOUNT_LEN,
  MINT_LEN,
  isTokenProgram,
  unpackTokenAccount,
  unpackMint,
  packMint,
  setMintSupply,
  newTokenAccountData,
  patchTokenAccount,
  uiTokenAmount,
} from './token.js';

const require = createRequire(import.meta.url);
const { LiteSVM, Account, FailedTransactionMetadata } = require('litesvm');

export const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const MEMO_PROGRAMS = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);
const NATIVE_LOADER = 'NativeLoader1111111111111111111111111111111';

export const MAX_PROCESSING_AGE = 150; // blocks a blockhash stays valid
export const FINALIZATION_DEPTH = 32; // slots until a slot counts as finalized
const BLOCKHASH_RETENTION = 600; // how many blockhashes are remembered
const PRIO_FEE_SLOTS = 150;
const STATE_VERSION = 1;
const U64_MAX = (1n << 64n) - 1n;
const LITESVM_HISTORY = 32n; // LiteSVM's default transaction history capacity

export const MINT_AUTHORITY = keypairFromLabel('localnet/usdc-mint-authority');
export const FAUCET = keypairFromLabel('localnet/faucet');
const FAUCET_FLOAT = 1_000_000_000n * 1_000_000_000n; // 1e9 SOL
export const GENESIS_HASH = b58encode(sha256('localnet/genesis'));
export const IDENTITY = b58encode(keypairFromLabel('localnet/identity').publicKey);

const faucets = [FAUCET];
function faucetKeypair(k) {
  while (faucets.length <= k) faucets.push(keypairFromLabel(`localnet/faucet/${faucets.length}`));
  return faucets[k];
}

const nowSec = () => Math.floor(Date.now() / 1000);

export class Chain {
  constructor({ log = () => {}, statePath = null } = {}) {
    this.log = log;
    this.statePath = statePath;
    this.svm = null;
    this.slot = 0;
    this.blockHeight = 0;
    this.blockhashes = new Map(); // blockhash -> { height, slot }
    this.txs = new Map(); // signature -> record
    this.addrIndex = new Map(); // address -> [signature] (oldest first)
    this.prioFees = new Map(); // slot -> [{ price, writable: Set }]
    // A congested market (localnet_setMarket): sendTransaction drops a
    // transaction whose compute-unit price is below this (µlamports), and
    // every recent slot reports it as its minimum fee. 0n: uncongested.
    this.minPriorityFee = 0n;
    this.transactionCount = 0;
    this.touched = new Set(); // accounts written via RPC (cheats, airdrops, transactions)
    this.dirty = false;
  }

  /** Loads state from `statePath` when the file exists, else creates genesis. */
  static open(opts = {}) {
    const chain = new Chain(opts);
    if (opts.statePath && fs.existsSync(opts.statePath)) {
      chain.load(opts.statePath);
      chain.log(`loaded state from ${opts.statePath} (slot ${chain.slot}, ${chain.txs.size} txs)`);
    } else {
      chain.genesis();
    }
    return chain;
  }

  configureSvm() {
    this.svm.withSigverify(true);
    this.svm.withBlockhashCheck(false); // blockhash ages are checked here, 150 blocks like a cluster
  }

  genesis() {
    this.svm = new LiteSVM();
    this.configureSvm();
    this.svm.withNativeMints();
    this.slot = 0;
    this.blockHeight = 0;
    this.setClock();
    this.rememberBlockhash();
    const mintRent = this.svm.minimumBalanceForRentExemption(BigInt(MINT_LEN));
    for (const mint of [USDC_MAINNET, USDC_DEVNET]) {
      this.setAccount(mint, {
        lamports: mintRent,
        data: packMint({ mintAuthority: MINT_AUTHORITY.publicKey, supply: 0n, decimals: 6, freezeAuthority: null }),
        owner: TOKEN_PROGRAM,
        executable: false,
        rentEpoch: U64_MAX,
      });
    }
    this.topUpFaucet(0n);
    this.dirty = true;
  }

  // ---------------------------------------------------------------- clock

  setClock() {
    this.svm.warpToSlot(BigInt(this.slot));
    const c = this.svm.getClock();
    c.unixTimestamp = BigInt(nowSec());
    this.svm.setClock(c);
  }

  rememberBlockhash() {
    this.blockhashes.set(this.svm.latestBlockhash(), { height: this.blockHeight, slot: this.slot });
    if (this.blockhashes.size > BLOCKHASH_RETENTION) {
      const drop = this.blockhashes.size - BLOCKHASH_RETENTION;
      let i = 0;
      for (const k of this.blockhashes.keys()) {
        if (i++ >= drop) break;
        this.blockhashes.delete(k);
      }
    }
  }

  /** Produces the next slot/block with a fresh blockhash. */
  tick() {
    this.slot += 1;
    this.blockHeight += 1;
    this.svm.expireBlockhash();
    this.setClock();
    this.rememberBlockhash();
    this.prioFees.delete(this.slot - PRIO_FEE_SLOTS);
    this.dirty = true;
  }

  advance(n) {
    for (let i = 0; i < n; i++) this.tick();
  }

  latestBlockhash() {
    const blockhash = this.svm.latestBlockhash();
    return { blockhash, lastValidBlockHeight: this.blockHeight + MAX_PROCESSING_AGE };
  }

  /** Last block height at which `blockhash` is accepted, or null if unknown. */
  lastValidBlockHeight(blockhash) {
    const info = this.blockhashes.get(blockhash);
    return info ? info.height + MAX_PROCESSING_AGE : null;
  }

  isBlockhashValid(blockhash) {
    const last = this.lastValidBlockHeight(blockhash);
    return last !== null && this.blockHeight <= last;
  }

  /** Blockhash check for a parsed message, including durable nonces. */
  isMessageLifetimeValid(msg) {
    if (this.isBlockhashValid(msg.recentBlockhash)) return true;
    return this.durableNonceMatches(msg);
  }

  durableNonceMatches(msg) {
    const ix = msg.instructions[0];
    if (!ix || msg.staticKeysB58[ix.programIdIndex] !== SYSTEM_PROGRAM) return false;
    if (ix.data.length < 4 || new DataView(ix.data.buffer, ix.data.byteOffset, 4).getUint32(0, true) !== 4) return false;
    const nonceKey = msg.staticKeysB58[ix.accounts[0]];
    if (!nonceKey) return false;
    const acc = this.getAccount(nonceKey);
    if (!acc || acc.owner !== SYSTEM_PROGRAM || acc.data.length !== 80) return false;
    const state = new DataView(acc.data.buffer, acc.data.byteOffset + 4, 4).getUint32(0, true);
    return state === 1 && b58encode(acc.data.subarray(40, 72)) === msg.recentBlockhash;
  }

  // ------------------------------------------------------------- accounts

  /** Account at `address` (base58), or null when missing / zero lamports. */
  getAccount(address) {
    const a = this.svm.inner.getAccount(b58decode(address));
    if (!a) return null;
    const lamports = a.lamports();
    if (lamports === 0n) return null;
    return {
      lamports,
      data: a.data(),
      owner: b58encode(a.owner()),
      executable: a.executable(),
      rentEpoch: a.rentEpoch(),
    };
  }

  setAccount(address, { lamports, data, owner, executable, rentEpoch }) {
    this.svm.inner.setAccount(
      b58decode(address),
      new Account(BigInt(lamports), Uint8Array.from(data), b58decode(owner), !!executable, BigInt(rentEpoch ?? 0n)),
    );
    this.touched.add(address);
    this.dirty = true;
  }

  balanceOf(address) {
    return this.getAccount(address)?.lamports ?? 0n;
  }

  getMint(address) {
    const a = this.getAccount(address);
    return a ? unpackMint(a.owner, a.data) : null;
  }

  rentExempt(len) {
    return this.svm.minimumBalanceForRentExemption(BigInt(len));
  }

  isBuiltinProgram(programId) {
    const a = this.svm.inner.getAccount(b58decode(programId));
    return !!a && b58encode(a.owner()) === NATIVE_LOADER;
  }

  fee(msg) {
    return computeFee(msg, (pid) => this.isBuiltinProgram(pid));
  }

  async associatedTokenAddress(owner, mint, tokenProgram = TOKEN_PROGRAM) {
    const enc = getAddressEncoder();
    const [pda] = await getProgramDerivedAddress({
      programAddress: ATA_PROGRAM,
      seeds: [enc.encode(owner), enc.encode(tokenProgram), enc.encode(mint)],
    });
    return pda;
  }

  /** surfnet_setTokenAccount semantics: create/patch the owner's ATA for mint. */
  async setTokenAccount(owner, mint, update, tokenProgram = TOKEN_PROGRAM) {
    const ata = await this.associatedTokenAddress(owner, mint, tokenProgram);
    const isNative = mint === NATIVE_MINT;
    const rent = this.rentExempt(TOKEN_ACCOUNT_LEN);
    const existing = this.getAccount(ata);
    let data;
    let prevAmount = 0n;
    const cur = existing && existing.owner === tokenProgram ? unpackTokenAccount(existing.owner, existing.data) : null;
    if (cur) {
      data = existing.data;
      prevAmount = cur.amount;
    } else {
      data = newTokenAccountData(b58decode(mint), b58decode(owner), isNative ? rent : null);
    }
    data = patchTokenAccount(data, update);
    const amount = unpackTokenAccount(tokenProgram, data)?.amount ?? 0n;
    this.setAccount(ata, {
      lamports: isNative ? rent + amount : existing?.lamports > rent ? existing.lamports : rent,
      data,
      owner: tokenProgram,
      executable: false,
      rentEpoch: existing?.rentEpoch ?? U64_MAX,
    });
    // keep the mint's supply consistent with what was credited
    const mintAcc = this.getAccount(mint);
    const m = mintAcc && mintAcc.owner === tokenProgram ? unpackMint(mintAcc.owner, mintAcc.data) : null;
    if (m && !isNative && amount !== prevAmount) {
      let supply = m.supply + amount - prevAmount;
      if (supply < 0n) supply = 0n;
      if (supply > U64_MAX) supply = U64_MAX;
      this.setAccount(mint, { ...mintAcc, data: setMintSupply(mintAcc.data, supply) });
    }
    return ata;
  }

  topUpFaucet(need, faucet = FAUCET) {
    const addr = b58encode(faucet.publicKey);
    const bal = this.balanceOf(addr);
    if (bal < need + 1_000_000_000n) {
      const target = need + FAUCET_FLOAT > U64_MAX / 2n ? U64_MAX / 2n : need + FAUCET_FLOAT;
      this.setAccount(addr, { lamports: target, data: new Uint8Array(0), owner: SYSTEM_PROGRAM, rentEpoch: U64_MAX });
    }
  }

  // --------------------------------------------------------- transactions

  /** All account keys of a message (static then loaded), resolving lookup tables. */
  resolveKeys(msg) {
    const writable = [];
    const readonly = [];
    for (const l of msg.addressTableLookups) {
      const table = this.getAccount(b58encode(l.accountKey));
      const ok = table && table.owner === ALT_PROGRAM && table.data.length >= 56;
      const addrs = (idx) =>
        idx.map((i) => {
          const o = 56 + i * 32;
          return ok && o + 32 <= table.data.length ? b58encode(table.data.subarray(o, o + 32)) : null;
        });
      writable.push(...addrs(l.writableIndexes));
      readonly.push(...addrs(l.readonlyIndexes));
    }
    const resolved = !writable.includes(null) && !readonly.includes(null);
    const all = [...msg.staticKeysB58, ...writable, ...readonly];
    const isWritable = (i) => (i < msg.staticKeys.length ? isStaticWritable(msg, i) : i < msg.staticKeys.length + writable.length);
    return { all, loaded: { writable, readonly }, resolved, isWritable };
  }

  tokenBalances(keys) {
    const out = [];
    keys.forEach((k, i) => {
      if (!k) return;
      const a = this.getAccount(k);
      if (!a || !isTokenProgram(a.owner)) return;
      const t = unpackTokenAccount(a.owner, a.data);
      if (!t) return;
      const m = this.getMint(t.mint);
      if (!m) return;
      out.push({
        accountIndex: i,
        mint: t.mint,
        owner: t.owner,
        programId: a.owner,
        uiTokenAmount: uiTokenAmount(t.amount, m.decimals),
      });
    });
    return out;
  }

  /**
   * Runs `parsed` (from parseTransaction) through the VM at the current slot.
   * Returns { included, err, logs, unitsConsumed, record }.
   * Only transactions the runtime commits (success or execution failure with
   * fee charged) are recorded.
   */
  execute(parsed) {
    const msg = parsed.message;
    const keys = this.resolveKeys(msg);
    const preBalances = keys.all.map((k) => (k ? this.balanceOf(k) : 0n));
    const preTokenBalances = this.tokenBalances(keys.all);
    const res =
      msg.version === 'legacy'
        ? this.svm.inner.sendLegacyTransaction(parsed.bytes)
        : this.svm.inner.sendVersionedTransaction(parsed.bytes);
    const failed = res instanceof FailedTransactionMetadata;
    const meta = failed ? res.meta() : res;
    const err = failed ? convertTxError(res.err()) : null;
    const logs = meta.logs();
    const unitsConsumed = Number(meta.computeUnitsConsumed());
    const included = !failed || this.svm.inner.getTransaction(parsed.signatures[0]) !== null;
    if (!included) return { included: false, err, logs, unitsConsumed };
    this.dirty = true;
    const postBalances = keys.all.map((k) => (k ? this.balanceOf(k) : 0n));
    const { fee, cuPrice } = this.fee(msg);
    const record = {
      signature: parsed.signature,
      slot: this.slot,
      blockTime: nowSec(),
      tx: Buffer.from(parsed.bytes).toString('base64'),
      version: msg.version,
      err,
      fee,
      preBalances,
      postBalances,
      preTokenBalances,
      postTokenBalances: this.tokenBalances(keys.all),
      logs,
      innerInstructions: convertInner(meta.innerInstructions()),
      computeUnitsConsumed: unitsConsumed,
      returnData: convertReturnData(meta.returnData()),
      loadedAddresses: keys.loaded,
      accountKeys: keys.all,
      memo: extractMemo(msg),
    };
    this.recordTx(record);
    keys.all.forEach((k, i) => {
      if (k && keys.isWritable(i)) this.touched.add(k);
    });
    const writable = new Set(keys.all.filter((k, i) => k && keys.isWritable(i)));
    if (!this.prioFees.has(this.slot)) this.prioFees.set(this.slot, []);
    this.prioFees.get(this.slot).push({ price: cuPrice, writable, signature: parsed.signature });
    return { included: true, err, logs, unitsConsumed, record };
  }

  /** Simulates raw transaction bytes; never changes state. */
  simulate(parsed, { sigverify = false } = {}) {
    const msg = parsed.message;
    if (!sigverify) this.svm.withSigverify(false);
    let res;
    try {
      res =
        msg.version === 'legacy'
          ? this.svm.inner.simulateLegacyTransaction(parsed.bytes)
          : this.svm.inner.simulateVersionedTransaction(parsed.bytes);
    } finally {
      if (!sigverify) this.svm.withSigverify(true);
    }
    const failed = res instanceof FailedTransactionMetadata;
    const meta = res.meta();
    const postAccounts = new Map();
    if (!failed) {
      for (const aa of res.postAccounts()) {
        const a = aa.account();
        postAccounts.set(b58encode(aa.address), {
          lamports: a.lamports(),
          data: a.data(),
          owner: b58encode(a.owner()),
          executable: a.executable(),
          rentEpoch: a.rentEpoch(),
        });
      }
    }
    return {
      err: failed ? convertTxError(res.err()) : null,
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      returnData: convertReturnData(meta.returnData()),
      innerInstructions: convertInner(meta.innerInstructions()),
      postAccounts,
    };
  }

  recordTx(rec) {
    this.txs.set(rec.signature, rec);
    this.transactionCount += 1;
    for (const k of new Set(rec.accountKeys)) {
      if (!k) continue;
      let l = this.addrIndex.get(k);
      if (!l) this.addrIndex.set(k, (l = []));
      l.push(rec.signature);
    }
  }

  /** Accounts a recorded transaction wrote: its writable keys, static then loaded. */
  writtenBy(rec) {
    const msg = parseTransaction(Buffer.from(rec.tx, 'base64')).message;
    const n = msg.staticKeys.length;
    const nLoaded = rec.loadedAddresses.writable.length;
    return new Set(rec.accountKeys.filter((k, i) => k && (i < n ? isStaticWritable(msg, i) : i < n + nLoaded)));
  }

  /**
   * Why `sig` cannot be dropped as by a fork, or null when it can. A finalized
   * transaction is never dropped. Its effects cannot be undone alone when a
   * later transaction or cheat wrote an account it wrote (those writes built
   * on them), nor when it closed an account (the meta does not hold its data).
   */
  abandonRefusal(sig) {
    const rec = this.txs.get(sig);
    if (!rec) return 'transaction not found';
    if (this.slot - rec.slot >= FINALIZATION_DEPTH) return `transaction is finalized (slot ${rec.slot})`;
    for (const k of this.writtenBy(rec)) {
      const list = this.addrIndex.get(k);
      const later = list.slice(list.indexOf(sig) + 1).find((s) => this.writtenBy(this.txs.get(s)).has(k));
      if (later) return `account ${k} was written later by ${later}`;
      const i = rec.accountKeys.indexOf(k);
      if (rec.preBalances[i] > 0n && rec.postBalances[i] === 0n) return `it closed account ${k}`;
      const post = rec.postTokenBalances.find((b) => b.accountIndex === i);
      const acc = this.getAccount(k);
      const amount = acc && unpackTokenAccount(acc.owner, acc.data)?.amount;
      if (this.balanceOf(k) !== rec.postBalances[i] || (post && amount !== BigInt(post.uiTokenAmount.amount))) {
        return `account ${k} was changed since`;
      }
    }
    return null;
  }

  /**
   * Drops `sig` (see abandonRefusal first) as a fork that lost leaves it:
   * every account it wrote gets back its recorded pre balance and pre token
   * amount, an account it created is removed, a mint it wrote (MintTo, Burn)
   * gets its supply back, and it leaves the history. Only what the meta
   * records is restored: other data it changed (a durable nonce, a delegate,
   * program state) stays. The slot and everything else stay as they are.
   */
  abandon(sig) {
    const rec = this.txs.get(sig);
    const written = this.writtenBy(rec);
    rec.accountKeys.forEach((k, i) => {
      if (!written.has(k)) return;
      const acc = this.getAccount(k);
      if (rec.preBalances[i] === 0n || !acc) {
        this.setAccount(k, { lamports: 0n, data: new Uint8Array(0), owner: SYSTEM_PROGRAM, rentEpoch: 0n });
        return;
      }
      const pre = rec.preTokenBalances.find((b) => b.accountIndex === i);
      const isToken = pre && unpackTokenAccount(acc.owner, acc.data);
      const data = isToken ? patchTokenAccount(acc.data, { amount: BigInt(pre.uiTokenAmount.amount) }) : acc.data;
      this.setAccount(k, { ...acc, lamports: rec.preBalances[i], data });
    });
    // tokens it minted or burned: amounts after minus before, per mint
    const minted = new Map();
    for (const [list, sign] of [[rec.postTokenBalances, 1n], [rec.preTokenBalances, -1n]]) {
      for (const b of list) minted.set(b.mint, (minted.get(b.mint) ?? 0n) + sign * BigInt(b.uiTokenAmount.amount));
    }
    for (const [mint, d] of minted) {
      const acc = d !== 0n && written.has(mint) ? this.getAccount(mint) : null;
      const m = acc && unpackMint(acc.owner, acc.data);
      if (m && m.supply >= d) this.setAccount(mint, { ...acc, data: setMintSupply(acc.data, m.supply - d) });
    }
    this.txs.delete(sig);
    this.transactionCount -= 1;
    for (const k of new Set(rec.accountKeys)) {
      if (!k) continue;
      const l = this.addrIndex.get(k).filter((s) => s !== sig);
      if (l.length) this.addrIndex.set(k, l);
      else this.addrIndex.delete(k);
    }
    const fees = this.prioFees.get(rec.slot);
    if (fees) this.prioFees.set(rec.slot, fees.filter((e) => e.signature !== sig));
    // LiteSVM refuses bytes it remembers as AlreadyProcessed, but a dropped
    // transaction may land again. It cannot forget one signature, so its
    // recent history (which `txs` stands in for) is emptied.
    if (this.svm.inner.getTransaction(b58decode(sig)) !== null) {
      this.svm.inner.setTransactionHistory(0n);
      this.svm.inner.setTransactionHistory(LITESVM_HISTORY);
    }
    this.dirty = true;
    return { abandoned: sig, slot: rec.slot };
  }

  /** Airdrop: a real transfer signed by a faucet keypair. Returns the signature. */
  airdrop(address, lamports) {
    const to = b58decode(address);
    const blockhash = b58decode(this.svm.latestBlockhash());
    // Identical requests in the same block would produce the same signature;
    // further faucet keypairs keep signatures unique.
    for (let k = 0; k < 10_000; k++) {
      const faucet = faucetKeypair(k);
      if (Buffer.from(faucet.publicKey).equals(Buffer.from(to))) continue;
      const message = buildTransferMessage(faucet.publicKey, to, lamports, blockhash);
      const sig = sign(faucet, message);
      const sigB58 = b58encode(sig);
      if (this.txs.has(sigB58)) continue;
      this.topUpFaucet(lamports, faucet);
      const parsed = parseTransaction(buildTransaction([sig], message));
      const r = this.execute(parsed);
      if (!r.included) throw new Error(`airdrop failed: ${JSON.stringify(r.err)}`);
      return sigB58;
    }
    throw new Error('too many identical airdrop requests in this block');
  }

  /** Status object for getSignatureStatuses as of slot `at` (the current one by default), or null. */
  signatureStatus(sig, at = this.slot) {
    const rec = this.txs.get(sig);
    if (!rec || rec.slot > at) return null;
    const age = at - rec.slot;
    const finalized = age >= FINALIZATION_DEPTH;
    return {
      slot: rec.slot,
      confirmations: finalized ? null : age,
      err: rec.err,
      status: rec.err ? { Err: rec.err } : { Ok: null },
      confirmationStatus: finalized ? 'finalized' : age >= 1 ? 'confirmed' : 'processed',
    };
  }

  /** Whether a recorded tx is visible at a commitment level, as of slot `at` (the current one by default). */
  visibleAt(rec, commitment, at = this.slot) {
    if (rec.slot > at) return false;
    const age = at - rec.slot;
    if (commitment === 'finalized') return age >= FINALIZATION_DEPTH;
    if (commitment === 'confirmed') return age >= 1;
    return true;
  }

  recentPrioritizationFees(addresses) {
    const out = [];
    const first = Math.max(0, this.slot - PRIO_FEE_SLOTS + 1);
    for (let s = first; s <= this.slot; s++) {
      const entries = this.prioFees.get(s) ?? [];
      let min = null;
      for (const e of entries) {
        if (addresses.length && !addresses.some((a) => e.writable.has(a))) continue;
        if (min === null || e.price < min) min = e.price;
      }
      // Congested: as if other traffic paying exactly the minimum had
      // landed in every slot of the window, touching every account (and
      // nothing cheaper could land), so each slot's minimum is the market's.
      if (this.minPriorityFee > 0n) min = this.minPriorityFee;
      out.push({ slot: s, prioritizationFee: min ?? 0n });
    }
    return out;
  }

  // ----------------------------------------------------------- persistence

  /** Whether this LiteSVM build can snapshot its whole state (1.5.0+). */
  canSnapshot() {
    return typeof this.svm.inner.toBytes === 'function' && typeof this.svm.inner.constructor.fromBytes === 'function';
  }

  save(file = this.statePath, { snapshot = this.canSnapshot() } = {}) {
    if (!file) return;
    const state = {
      version: STATE_VERSION,
      slot: this.slot,
      blockHeight: this.blockHeight,
      transactionCount: this.transactionCount,
      blockhashes: [...this.blockhashes.entries()].map(([h, i]) => [h, i.height, i.slot]),
      // Every account written through RPC; enough to rebuild the chain on a
      // LiteSVM build without snapshot support.
      accounts: [...this.touched].map((a) => {
        const acc = this.getAccount(a);
        return acc
          ? [a, acc.lamports, Buffer.from(acc.data).toString('base64'), acc.owner, acc.executable, acc.rentEpoch]
          : [a, 0n, '', SYSTEM_PROGRAM, false, 0n];
      }),
      txs: [...this.txs.values()],
      svm: snapshot ? Buffer.from(this.svm.toBytes()).toString('base64') : null,
    };
    const tmp = `${file}.${process.pid}.tmp`;
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(tmp, stringify(state));
    fs.renameSync(tmp, file);
    this.dirty = false;
  }

  load(file) {
    const state = parse(fs.readFileSync(file, 'utf8'));
    if (state.version !== STATE_VERSION) throw new Error(`unsupported state version ${state.version}`);
    this.slot = state.slot;
    this.blockHeight = state.blockHeight;
    const snapshotSupported = typeof new LiteSVM().inner.constructor.fromBytes === 'function';
    const fromSnapshot = !!state.svm && snapshotSupported;
    if (fromSnapshot) {
      this.svm = LiteSVM.fromBytes(Buffer.from(state.svm, 'base64'));
      this.configureSvm();
    } else {
      // rebuild from genesis plus every saved account
      this.genesis();
      this.slot = state.slot;
      this.blockHeight = state.blockHeight;
    }
    for (const [a, lamports, data, owner, executable, rentEpoch] of state.accounts ?? []) {
      this.touched.add(a);
      if (!fromSnapshot) {
        this.setAccount(a, { lamports: BigInt(lamports), data: Buffer.from(data, 'base64'), owner, executable, rentEpoch: BigInt(rentEpoch) });
      }
    }
    this.blockhashes = new Map(state.blockhashes.map(([h, height, slot]) => [h, { height, slot }]));
    for (const r of state.txs) {
      r.fee = BigInt(r.fee);
      r.preBalances = r.preBalances.map(BigInt);
      r.postBalances = r.postBalances.map(BigInt);
      this.recordTx(r);
    }
    this.transactionCount = state.transactionCount ?? this.txs.size;
    // the current blockhash must be known (it is new when rebuilt from accounts)
    if (!this.blockhashes.has(this.svm.latestBlockhash())) this.rememberBlockhash();
    this.setClock();
    this.dirty = false;
  }
}

function convertInner(inner) {
  const out = [];
  inner.forEach((list, index) => {
    if (!list.length) return;
    out.push({
      index,
      instructions: list.map((ii) => {
        const ci = ii.instruction();
        return {
          programIdIndex: ci.programIdIndex(),
          accounts: Array.from(ci.accounts()),
          data: b58encode(ci.data()),
          stackHeight: ii.stackHeight(),
        };
      }),
    });
  });
  return out;
}

function convertReturnData(rd) {
  if (!rd) return null;
  const data = rd.data();
  if (!data || data.length === 0) return null;
  return { programId: b58encode(rd.programId()), data: [Buffer.from(data).toString('base64'), 'base64'] };
}

/** agave's memo extraction for getSignaturesForAddress: "[len] text; ...". */
function extractMemo(msg) {
  const memos = [];
  for (const ix of msg.instructions) {
    if (!MEMO_PROGRAMS.has(msg.staticKeysB58[ix.programIdIndex])) continue;
    const text = Buffer.from(ix.data).toString('utf8');
    memos.push(`[${ix.data.length}] ${text}`);
  }
  return memos.length ? memos.join('; ') : null;
}
