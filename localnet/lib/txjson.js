// getTransaction / getBlock style encodings of recorded transactions.
import { b58decode, b58encode } from './base58.js';
import { parseTransaction, isStaticWritable, SYSTEM_PROGRAM } from './tx.js';
import { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, ATA_PROGRAM, uiTokenAmount } from './token.js';
import { MEMO_PROGRAMS } from './chain.js';

/** Encodes a stored record the way agave's getTransaction does. */
export function encodeTransaction(rec, encoding, withVersion, getMint) {
  const bytes = Buffer.from(rec.tx, 'base64');
  const parsed = parseTransaction(new Uint8Array(bytes));
  const msg = parsed.message;
  let transaction;
  if (encoding === 'base64') transaction = [bytes.toString('base64'), 'base64'];
  else if (encoding === 'base58') transaction = [b58encode(bytes), 'base58'];
  else if (encoding === 'jsonParsed') transaction = jsonParsedTx(parsed, rec, getMint);
  else transaction = jsonTx(parsed);

  const meta = {
    computeUnitsConsumed: rec.computeUnitsConsumed,
    err: rec.err,
    fee: rec.fee,
    innerInstructions:
      encoding === 'jsonParsed'
        ? rec.innerInstructions.map((g) => ({
            index: g.index,
            instructions: g.instructions.map((ix) =>
              parsedInstruction(rec.accountKeys[ix.programIdIndex], ix.accounts.map((a) => rec.accountKeys[a]), b58decode(ix.data), ix.stackHeight, getMint),
            ),
          }))
        : rec.innerInstructions,
    logMessages: rec.logs,
    postBalances: rec.postBalances,
    postTokenBalances: rec.postTokenBalances,
    preBalances: rec.preBalances,
    preTokenBalances: rec.preTokenBalances,
    rewards: [],
    status: rec.err ? { Err: rec.err } : { Ok: null },
  };
  if (encoding !== 'jsonParsed') meta.loadedAddresses = rec.loadedAddresses;
  if (rec.returnData) meta.returnData = rec.returnData;
  const out = { blockTime: rec.blockTime, meta, slot: rec.slot, transaction };
  if (withVersion) out.version = msg.version;
  return out;
}

function jsonTx(parsed) {
  const msg = parsed.message;
  const message = {
    accountKeys: msg.staticKeysB58,
    header: msg.header,
    instructions: msg.instructions.map((ix) => ({
      accounts: ix.accounts,
      data: b58encode(ix.data),
      programIdIndex: ix.programIdIndex,
      stackHeight: null,
    })),
    recentBlockhash: msg.recentBlockhash,
  };
  if (msg.version !== 'legacy') message.addressTableLookups = lookups(msg);
  return { message, signatures: parsed.signatures.map(b58encode) };
}

function lookups(msg) {
  return msg.addressTableLookups.map((l) => ({
    accountKey: b58encode(l.accountKey),
    readonlyIndexes: l.readonlyIndexes,
    writableIndexes: l.writableIndexes,
  }));
}

function jsonParsedTx(parsed, rec, getMint) {
  const msg = parsed.message;
  const keys = rec.accountKeys;
  const nStatic = msg.staticKeys.length;
  const nWritableLoaded = rec.loadedAddresses.writable.length;
  const accountKeys = keys.map((pubkey, i) => ({
    pubkey,
    signer: i < msg.header.numRequiredSignatures,
    source: i < nStatic ? 'transaction' : 'lookupTable',
    writable: i < nStatic ? isStaticWritable(msg, i) : i < nStatic + nWritableLoaded,
  }));
  const message = {
    accountKeys,
    instructions: msg.instructions.map((ix) =>
      parsedInstruction(keys[ix.programIdIndex], ix.accounts.map((a) => keys[a]), ix.data, null, getMint),
    ),
    recentBlockhash: msg.recentBlockhash,
  };
  if (msg.version !== 'legacy') message.addressTableLookups = lookups(msg);
  return { message, signatures: parsed.signatures.map(b58encode) };
}

const u64 = (d, o) => new DataView(d.buffer, d.byteOffset + o, 8).getBigUint64(0, true);
const u32 = (d, o) => new DataView(d.buffer, d.byteOffset + o, 4).getUint32(0, true);

/** jsonParsed instruction: parsed for a few well-known programs, else partially decoded. */
export function parsedInstruction(programId, accounts, data, stackHeight, getMint) {
  const parsed = tryParse(programId, accounts, data, getMint);
  if (parsed) return { ...parsed, programId, stackHeight };
  return { accounts, data: b58encode(data), programId, stackHeight };
}

function tryParse(programId, a, d, getMint) {
  try {
    if (MEMO_PROGRAMS.has(programId)) {
      return { parsed: new TextDecoder('utf-8', { fatal: true }).decode(d), program: 'spl-memo' };
    }
    if (programId === SYSTEM_PROGRAM && d.length >= 4) {
      const tag = u32(d, 0);
      if (tag === 2 && d.length === 12 && a.length >= 2) {
        return {
          parsed: { info: { destination: a[1], lamports: u64(d, 4), source: a[0] }, type: 'transfer' },
          program: 'system',
        };
      }
      if (tag === 0 && d.length === 52 && a.length >= 2) {
        return {
          parsed: {
            info: { lamports: u64(d, 4), newAccount: a[1], owner: b58encode(d.subarray(20, 52)), source: a[0], space: u64(d, 12) },
            type: 'createAccount',
          },
          program: 'system',
        };
      }
      return null;
    }
    if ((programId === TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) && d.length >= 1) {
      const program = programId === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
      if (d[0] === 3 && d.length === 9 && a.length >= 3) {
        return {
          parsed: { info: { amount: u64(d, 1).toString(), authority: a[2], destination: a[1], source: a[0] }, type: 'transfer' },
          program,
        };
      }
      if (d[0] === 12 && d.length === 10 && a.length >= 4) {
        return {
          parsed: {
            info: { authority: a[3], destination: a[2], mint: a[1], source: a[0], tokenAmount: uiTokenAmount(u64(d, 1), d[9]) },
            type: 'transferChecked',
          },
          program,
        };
      }
      return null;
    }
    if (programId === ATA_PROGRAM && (d.length === 0 || (d.length === 1 && d[0] <= 1)) && a.length >= 6) {
      return {
        parsed: {
          info: { account: a[1], mint: a[3], source: a[0], systemProgram: a[4], tokenProgram: a[5], wallet: a[2] },
          type: d.length === 1 && d[0] === 1 ? 'createIdempotent' : 'create',
        },
        program: 'spl-associated-token-account',
      };
    }
  } catch {
    return null;
  }
  return null;
}
