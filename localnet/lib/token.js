// SPL Token / Token-2022 account layouts, UI amounts and jsonParsed shapes.
import { b58encode } from './base58.js';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const NATIVE_MINT = 'So11111111111111111111111111111111111111112';
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

/** A fresh initialized token account (165 bytes). */
export function newTokenAccountData(mintBytes, ownerBytes, nativeReserve = null) {
  const d = new Uint8Array(TOKEN_ACCOUNT_LEN);
  d.set(mintBytes, 0);
  d.set(ownerBytes, 32);
  d[108] = 1;
  if (nativeReserve !== null) {
    setU32(d, 109, 1);
    setU64(d, 113, nativeReserve);
  }
  return d;
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
    return { program, parsed: { info, type: 'account' }, space: data.length };
  }
  const mint = unpackMint(owner, data);
  if (mint) {
    return {
      program,
      parsed: {
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority,
          isInitialized: true,
          mintAuthority: mint.mintAuthority,
          supply: mint.supply.toString(),
        },
        type: 'mint',
      },
      space: data.length,
    };
  }
  return null;
}
