// SPL Token / Token-2022 account layouts, UI amounts and jsonParsed shapes.
import { b58encode } from './base58.js';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112';
export const NATIVE_MINT_2022 = '9pan9bMn5HatX4EJdBwg9VgCa7Uz5HL8N1m5D3NdXejP';
export const TOKEN_ACCOUNT_LEN = 165;
export const MINT_LEN = 82;
const STATES = ['uninitialized', 'initialized', 'frozen'];

export const isTokenProgram = (owner) => owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
export const programName = (owner) => (owner === TOKEN_2022_PROGRAM ? 'spl-token-2022' : 'spl-token');

const u64 = (d, o) => new DataView(d.buffer, d.byteOffset + o, 8).getBigUint64(0, true);
const u32 = (d, o) => new DataView(d.buffer, d.byteOffset + o, 4).getUint32(0, true);
const setU64 = (d, o, v) => new DataView(d.buffer, d.byteOffset + o, 8).setBigUint64(0, BigInt(v), true);
const setU32 = (d, o, v) => new DataView(d.buffer, d.byteOffset + o, 4).setUint32(0, v, true);
const optKey = (d, o) => (u32(d, o) === 1 ? b58encode(d.subarray(o + 4, o + 36)) : null);

function isTokenAccountData(owner, data) {
  if (owner === TOKEN_PROGRAM) return data.length === TOKEN_ACCOUNT_LEN;
  if (owner === TOKEN_2022_PROGRAM) {
    return data.length === TOKEN_ACCOUNT_LEN || (data.length > TOKEN_ACCOUNT_LEN && data[TOKEN_ACCOUNT_LEN] === 2);
  }
  return false;
}

function isMintData(owner, data) {
  if (owner === TOKEN_PROGRAM) return data.length === MINT_LEN;
  if (owner === TOKEN_2022_PROGRAM) {
    return data.length === MINT_LEN || (data.length > TOKEN_ACCOUNT_LEN && data[TOKEN_ACCOUNT_LEN] === 1);
  }
  return false;
}

/** Unpacks an initialized token account, or returns null. */
export function unpackTokenAccount(owner, data) {
  if (!isTokenProgram(owner) || !isTokenAccountData(owner, data)) return null;
  const state = data[108];
  if (state === 0 || state > 2) return null;
  return {
    mint: b58encode(data.subarray(0, 32)),
    owner: b58encode(data.subarray(32, 64)),
    amount: u64(data, 64),
    delegate: optKey(data, 72),
    state: STATES[state],
    isNative: u32(data, 109) === 1 ? u64(data, 113) : null,
    delegatedAmount: u64(data, 121),
    closeAuthority: optKey(data, 129),
  };
}

/** Unpacks an initialized mint, or returns null. */
export function unpackMint(owner, data) {
  if (!isTokenProgram(owner) || !isMintData(owner, data)) return null;
  if (data[45] !== 1) return null;
  return {
    mintAuthority: optKey(data, 0),
    supply: u64(data, 36),
    decimals: data[44],
    isInitialized: true,
    freezeAuthority: optKey(data, 46),
  };
}

export function packMint({ mintAuthority, supply, decimals, freezeAuthority }) {
  const d = new Uint8Array(MINT_LEN);
  if (mintAuthority) {
    setU32(d, 0, 1);
    d.set(mintAuthority, 4);
  }
  setU64(d, 36, supply);
  d[44] = decimals;
  d[45] = 1;
  if (freezeAuthority) {
    setU32(d, 46, 1);
    d.set(freezeAuthority, 50);
  }
  return d;
}

export function setMintSupply(data, supply) {
  const d = Uint8Array.from(data);
  setU64(d, 36, supply);
  return d;
}

/**
 * A fresh initialized token account: 165 bytes, or for Token-2022 with
 * `extensions` ([{type, value}], see accountExtensionsFor) the 165-byte base,
 * the account-type byte 2 and the extensions' TLV entries.
 */
export function newTokenAccountData(mintBytes, ownerBytes, nativeReserve = null, { extensions = [], state = 1 } = {}) {
  const base = new Uint8Array(TOKEN_ACCOUNT_LEN);
  base.set(mintBytes, 0);
  base.set(ownerBytes, 32);
  base[108] = state;
  if (nativeReserve !== null) {
    setU32(base, 109, 1);
    setU64(base, 113, nativeReserve);
  }
  return extensions.length ? withExtensions(base, ACCOUNT_TYPE_ACCOUNT, extensions) : base;
}

/** Writes fields into a token account's data (a copy is returned). */
export function patchTokenAccount(data, { amount, delegate, state, delegatedAmount, closeAuthority }) {
  const d = Uint8Array.from(data);
  if (amount !== undefined) setU64(d, 64, amount);
  if (delegate !== undefined) {
    d.fill(0, 72, 108);
    if (delegate) {
      setU32(d, 72, 1);
      d.set(delegate, 76);
    }
  }
  if (state !== undefined) d[108] = state;
  if (delegatedAmount !== undefined) setU64(d, 121, delegatedAmount);
  if (closeAuthority !== undefined) {
    d.fill(0, 129, 165);
    if (closeAuthority) {
      setU32(d, 129, 1);
      d.set(closeAuthority, 133);
    }
  }
  return d;
}

export const STATE_CODES = { uninitialized: 0, initialized: 1, frozen: 2 };

/** agave's real_number_string_trimmed. */
export function uiAmountString(amount, decimals) {
  const s = BigInt(amount).toString();
  if (decimals === 0) return s;
  const padded = s.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const frac = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

export function uiTokenAmount(amount, decimals) {
  return {
    amount: BigInt(amount).toString(),
    decimals,
    uiAmount: Number(BigInt(amount)) / 10 ** decimals,
    uiAmountString: uiAmountString(amount, decimals),
  };
}

/**
 * jsonParsed form of a token account or mint, as agave's account decoder
 * produces it; null when the account is not parsable (callers fall back to
 * base64). `getMint(address)` returns the unpacked mint or null.
 */
export function parseTokenAccountJson(owner, data, getMint) {
  const program = programName(owner);
  const acc = unpackTokenAccount(owner, data);
  if (acc) {
    const mint = getMint(acc.mint);
    if (!mint) return null;
    const dec = mint.decimals;
    const info = {
      isNative: acc.isNative !== null,
      mint: acc.mint,
      owner: acc.owner,
      state: acc.state,
      tokenAmount: uiTokenAmount(acc.amount, dec),
    };
    if (acc.delegate) {
      info.delegate = acc.delegate;
      info.delegatedAmount = uiTokenAmount(acc.delegatedAmount, dec);
    }
    if (acc.isNative !== null) info.rentExemptReserve = uiTokenAmount(acc.isNative, dec);
    if (acc.closeAuthority) info.closeAuthority = acc.closeAuthority;
    const extensions = parseExtensions(data).map(uiExtension);
    if (extensions.length) info.extensions = extensions;
    return { program, parsed: { info, type: 'account' }, space: data.length };
  }
  const mint = unpackMint(owner, data);
  if (mint) {
    const info = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority,
      isInitialized: true,
      mintAuthority: mint.mintAuthority,
      supply: mint.supply.toString(),
    };
    const extensions = parseExtensions(data).map(uiExtension);
    if (extensions.length) info.extensions = extensions;
    return { program, parsed: { info, type: 'mint' }, space: data.length };
  }
  return null;
}

// ------------------------------------------------------- Token-2022 extensions
//
// A Token-2022 mint or account with extensions is its base state (a mint's 82
// bytes padded with zeros to 165, or an account's 165 bytes), one account-type
// byte at offset 165 (1 mint, 2 account), then TLV entries: u16 type, u16
// length, value. The numbers are spl-token-2022's ExtensionType.

export const ACCOUNT_TYPE_MINT = 1;
export const ACCOUNT_TYPE_ACCOUNT = 2;

export const EXT = Object.freeze({
  Uninitialized: 0,
  TransferFeeConfig: 1,
  TransferFeeAmount: 2,
  MintCloseAuthority: 3,
  ConfidentialTransferMint: 4,
  ConfidentialTransferAccount: 5,
  DefaultAccountState: 6,
  ImmutableOwner: 7,
  MemoTransfer: 8,
  NonTransferable: 9,
  InterestBearingConfig: 10,
  CpiGuard: 11,
  PermanentDelegate: 12,
  NonTransferableAccount: 13,
  TransferHook: 14,
  TransferHookAccount: 15,
  ConfidentialTransferFeeConfig: 16,
  ConfidentialTransferFeeAmount: 17,
  MetadataPointer: 18,
  TokenMetadata: 19,
  GroupPointer: 20,
  TokenGroup: 21,
  GroupMemberPointer: 22,
  TokenGroupMember: 23,
  ConfidentialMintBurn: 24,
  ScaledUiAmount: 25,
  Pausable: 26,
  PausableAccount: 27,
});

const ZERO_KEY = new Uint8Array(32);
/** OptionalNonZeroPubkey: 32 bytes, all zero for None. */
const optNonZero = (key) => (key ? Uint8Array.from(key) : ZERO_KEY);
const nonZeroKey = (d, o) => (d.subarray(o, o + 32).some((b) => b !== 0) ? b58encode(d.subarray(o, o + 32)) : null);
const nonZeroB64 = (d, o, n) => (d.subarray(o, o + n).some((b) => b !== 0) ? Buffer.from(d.subarray(o, o + n)).toString('base64') : null);

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const u16le = (v) => Uint8Array.of(v & 0xff, (v >> 8) & 0xff);
const u32le = (v) => {
  const d = new Uint8Array(4);
  setU32(d, 0, v);
  return d;
};
const u64le = (v) => {
  const d = new Uint8Array(8);
  setU64(d, 0, v);
  return d;
};
const borshString = (s) => {
  const b = new TextEncoder().encode(s);
  return concat([u32le(b.length), b]);
};

/** `base` (82-byte mint or 165-byte account) + padding + account type + TLV entries. */
export function withExtensions(base, accountType, extensions) {
  const head = new Uint8Array(TOKEN_ACCOUNT_LEN + 1);
  head.set(base, 0);
  head[TOKEN_ACCOUNT_LEN] = accountType;
  return concat([head, ...extensions.flatMap(({ type, value }) => [u16le(type), u16le(value.length), value])]);
}

/** A Token-2022 mint: the packMint fields plus `extensions` ([{type, value}], built below). */
export function packMint2022({ extensions = [], ...fields }) {
  const base = packMint(fields);
  return extensions.length ? withExtensions(base, ACCOUNT_TYPE_MINT, extensions) : base;
}

/** The TLV entries of a Token-2022 mint or account ([{type, value}]), [] when it has none. */
export function parseExtensions(data) {
  const out = [];
  if (data.length <= TOKEN_ACCOUNT_LEN) return out;
  let o = TOKEN_ACCOUNT_LEN + 1;
  while (o + 4 <= data.length) {
    const type = data[o] | (data[o + 1] << 8);
    const len = data[o + 2] | (data[o + 3] << 8);
    if (type === EXT.Uninitialized) break; // zero padding after the last entry
    if (o + 4 + len > data.length) break;
    out.push({ type, value: data.subarray(o + 4, o + 4 + len) });
    o += 4 + len;
  }
  return out;
}

/** Extension builders: each returns {type, value} with the program's layout. */
export const ext = {
  mintCloseAuthority: (closeAuthority) => ({ type: EXT.MintCloseAuthority, value: optNonZero(closeAuthority) }),
  permanentDelegate: (delegate) => ({ type: EXT.PermanentDelegate, value: optNonZero(delegate) }),
  /** older/newer: {epoch, maximumFee, basisPoints}. */
  transferFeeConfig: ({ configAuthority, withdrawAuthority, withheldAmount = 0n, older, newer = older }) => ({
    type: EXT.TransferFeeConfig,
    value: concat([
      optNonZero(configAuthority),
      optNonZero(withdrawAuthority),
      u64le(withheldAmount),
      ...[older, newer].flatMap((f) => [u64le(f.epoch), u64le(f.maximumFee), u16le(f.basisPoints)]),
    ]),
  }),
  /** auditorElgamalPubkey: 32 bytes or null. */
  confidentialTransferMint: ({ authority, autoApproveNewAccounts = false, auditorElgamalPubkey = null }) => ({
    type: EXT.ConfidentialTransferMint,
    value: concat([optNonZero(authority), Uint8Array.of(autoApproveNewAccounts ? 1 : 0), optNonZero(auditorElgamalPubkey)]),
  }),
  /** withheldAmount: a 64-byte ElGamal ciphertext, zero (empty) by default. */
  confidentialTransferFeeConfig: ({ authority, withdrawWithheldAuthorityElgamalPubkey = null, harvestToMintEnabled = true }) => ({
    type: EXT.ConfidentialTransferFeeConfig,
    value: concat([
      optNonZero(authority),
      optNonZero(withdrawWithheldAuthorityElgamalPubkey),
      Uint8Array.of(harvestToMintEnabled ? 1 : 0),
      new Uint8Array(64),
    ]),
  }),
  transferHook: ({ authority, programId = null }) => ({ type: EXT.TransferHook, value: concat([optNonZero(authority), optNonZero(programId)]) }),
  metadataPointer: ({ authority, metadataAddress }) => ({
    type: EXT.MetadataPointer,
    value: concat([optNonZero(authority), optNonZero(metadataAddress)]),
  }),
  /** spl-token-metadata-interface TokenMetadata, Borsh: additionalMetadata is [[key, value]]. */
  tokenMetadata: ({ updateAuthority, mint, name, symbol, uri, additionalMetadata = [] }) => ({
    type: EXT.TokenMetadata,
    value: concat([
      optNonZero(updateAuthority),
      Uint8Array.from(mint),
      borshString(name),
      borshString(symbol),
      borshString(uri),
      u32le(additionalMetadata.length),
      ...additionalMetadata.flatMap(([k, v]) => [borshString(k), borshString(v)]),
    ]),
  }),
  immutableOwner: () => ({ type: EXT.ImmutableOwner, value: new Uint8Array(0) }),
  transferFeeAmount: (withheldAmount = 0n) => ({ type: EXT.TransferFeeAmount, value: u64le(withheldAmount) }),
  transferHookAccount: () => ({ type: EXT.TransferHookAccount, value: Uint8Array.of(0) }),
  nonTransferableAccount: () => ({ type: EXT.NonTransferableAccount, value: new Uint8Array(0) }),
  pausableAccount: () => ({ type: EXT.PausableAccount, value: new Uint8Array(0) }),
};

/**
 * The extensions an associated token account of a Token-2022 mint gets when
 * the ATA program creates it: ImmutableOwner, then the account extensions the
 * mint requires (spl-token-2022's get_required_init_account_extensions:
 * TransferFeeConfig → TransferFeeAmount, NonTransferable →
 * NonTransferableAccount, TransferHook → TransferHookAccount, Pausable →
 * PausableAccount), in the order of the mint's extensions. Also the state a
 * DefaultAccountState mint gives new accounts (1 initialized, 2 frozen).
 */
export function accountExtensionsFor(mintData) {
  const extensions = [ext.immutableOwner()];
  let state = 1;
  for (const { type, value } of parseExtensions(mintData)) {
    if (type === EXT.TransferFeeConfig) extensions.push(ext.transferFeeAmount());
    else if (type === EXT.NonTransferable) extensions.push(ext.nonTransferableAccount());
    else if (type === EXT.TransferHook) extensions.push(ext.transferHookAccount());
    else if (type === EXT.Pausable) extensions.push(ext.pausableAccount());
    else if (type === EXT.DefaultAccountState && value.length === 1) state = value[0];
  }
  return { extensions, state };
}

function borshStrings(d, o, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = u32(d, o);
    out.push(new TextDecoder().decode(d.subarray(o + 4, o + 4 + len)));
    o += 4 + len;
  }
  return { strings: out, end: o };
}

const transferFee = (d, o) => ({ epoch: u64(d, o), maximumFee: u64(d, o + 8), transferFeeBasisPoints: d[o + 16] | (d[o + 17] << 8) });

/**
 * One extension in agave's jsonParsed form (UiExtension: `extension` in
 * camelCase and its `state`); unparseableExtension when it is not understood.
 */
export function uiExtension({ type, value: v }) {
  const unparseable = { extension: 'unparseableExtension' };
  const need = (n) => v.length === n;
  switch (type) {
    case EXT.TransferFeeConfig:
      if (!need(108)) return unparseable;
      return {
        extension: 'transferFeeConfig',
        state: {
          transferFeeConfigAuthority: nonZeroKey(v, 0),
          withdrawWithheldAuthority: nonZeroKey(v, 32),
          withheldAmount: u64(v, 64),
          olderTransferFee: transferFee(v, 72),
          newerTransferFee: transferFee(v, 90),
        },
      };
    case EXT.TransferFeeAmount:
      return need(8) ? { extension: 'transferFeeAmount', state: { withheldAmount: u64(v, 0) } } : unparseable;
    case EXT.MintCloseAuthority:
      return need(32) ? { extension: 'mintCloseAuthority', state: { closeAuthority: nonZeroKey(v, 0) } } : unparseable;
    case EXT.ConfidentialTransferMint:
      if (!need(65)) return unparseable;
      return {
        extension: 'confidentialTransferMint',
        state: { authority: nonZeroKey(v, 0), autoApproveNewAccounts: v[32] === 1, auditorElgamalPubkey: nonZeroB64(v, 33, 32) },
      };
    case EXT.DefaultAccountState:
      return need(1) ? { extension: 'defaultAccountState', state: { accountState: STATES[v[0]] ?? 'uninitialized' } } : unparseable;
    case EXT.ImmutableOwner:
      return { extension: 'immutableOwner' };
    case EXT.MemoTransfer:
      return need(1) ? { extension: 'memoTransfer', state: { requireIncomingTransferMemos: v[0] === 1 } } : unparseable;
    case EXT.NonTransferable:
      return { extension: 'nonTransferable' };
    case EXT.CpiGuard:
      return need(1) ? { extension: 'cpiGuard', state: { lockCpi: v[0] === 1 } } : unparseable;
    case EXT.PermanentDelegate:
      return need(32) ? { extension: 'permanentDelegate', state: { delegate: nonZeroKey(v, 0) } } : unparseable;
    case EXT.NonTransferableAccount:
      return { extension: 'nonTransferableAccount' };
    case EXT.TransferHook:
      return need(64) ? { extension: 'transferHook', state: { authority: nonZeroKey(v, 0), programId: nonZeroKey(v, 32) } } : unparseable;
    case EXT.TransferHookAccount:
      return need(1) ? { extension: 'transferHookAccount', state: { transferring: v[0] === 1 } } : unparseable;
    case EXT.ConfidentialTransferFeeConfig:
      if (!need(129)) return unparseable;
      return {
        extension: 'confidentialTransferFeeConfig',
        state: {
          authority: nonZeroKey(v, 0),
          withdrawWithheldAuthorityElgamalPubkey: nonZeroB64(v, 32, 32),
          harvestToMintEnabled: v[64] === 1,
          withheldAmount: Buffer.from(v.subarray(65, 129)).toString('base64'),
        },
      };
    case EXT.MetadataPointer:
      return need(64) ? { extension: 'metadataPointer', state: { authority: nonZeroKey(v, 0), metadataAddress: nonZeroKey(v, 32) } } : unparseable;
    case EXT.TokenMetadata: {
      try {
        const { strings, end } = borshStrings(v, 64, 3);
        const n = u32(v, end);
        const { strings: kv } = borshStrings(v, end + 4, 2 * n);
        const additionalMetadata = [];
        for (let i = 0; i < n; i++) additionalMetadata.push([kv[2 * i], kv[2 * i + 1]]);
        return {
          extension: 'tokenMetadata',
          state: {
            updateAuthority: nonZeroKey(v, 0),
            mint: b58encode(v.subarray(32, 64)),
            name: strings[0],
            symbol: strings[1],
            uri: strings[2],
            additionalMetadata,
          },
        };
      } catch {
        return unparseable;
      }
    }
    case EXT.PausableAccount:
      return { extension: 'pausableAccount' };
    default:
      return unparseable;
  }
}
