// Shared helpers for the localnet tests.
import * as kit from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { startServer } from '../server.js';

export { kit };
export const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const LAMPORTS_PER_SOL = 1_000_000_000n;

/** Starts an in-process localnet on a free port. Slots advance slowly unless asked. */
export async function start(opts = {}) {
  const srv = await startServer({ port: 0, slotMs: 60_000, log: null, ...opts });
  let nextId = 1;
  const raw = async (body, { headers = {} } = {}) => {
    const res = await fetch(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : null };
  };
  /** Calls a method; resolves to the full JSON-RPC response object. */
  const call = async (method, params) => (await raw({ jsonrpc: '2.0', id: nextId++, method, params })).json;
  /** Calls a method and returns `result`, throwing on a JSON-RPC error. */
  const rpc = async (method, params) => {
    const r = await call(method, params);
    if (r.error) {
      const e = new Error(`${method}: ${r.error.code} ${r.error.message}`);
      e.rpc = r.error;
      throw e;
    }
    return r.result;
  };
  return { ...srv, raw, call, rpc };
}

export async function newWallet(net, sol = 10n) {
  const signer = await kit.generateKeyPairSigner();
  if (sol > 0n) await net.rpc('requestAirdrop', [signer.address, Number(sol * LAMPORTS_PER_SOL)]);
  return signer;
}

export function memoInstruction(text, signers = []) {
  return {
    programAddress: MEMO_PROGRAM,
    accounts: signers.map((s) => ({ address: s.address, role: kit.AccountRole.READONLY_SIGNER, signer: s })),
    data: new TextEncoder().encode(text),
  };
}

/** Builds and signs a transaction; returns { base64, base58, signature }. */
export async function buildTx(net, payer, instructions, { blockhash, version = 0 } = {}) {
  const bh = blockhash ?? (await net.rpc('getLatestBlockhash', [{ commitment: 'confirmed' }])).value.blockhash;
  const msg = kit.pipe(
    kit.createTransactionMessage({ version }),
    (m) => kit.setTransactionMessageFeePayerSigner(payer, m),
    (m) => kit.setTransactionMessageLifetimeUsingBlockhash({ blockhash: bh, lastValidBlockHeight: 0n }, m),
    (m) => kit.appendTransactionMessageInstructions(instructions, m),
  );
  const tx = await kit.signTransactionMessageWithSigners(msg);
  const bytes = kit.getTransactionEncoder().encode(tx);
  return {
    base64: Buffer.from(bytes).toString('base64'),
    base58: kit.getBase58Decoder().decode(bytes),
    signature: kit.getSignatureFromTransaction(tx),
    messageBase64: Buffer.from(tx.messageBytes).toString('base64'),
  };
}

export function transferSol(from, to, lamports) {
  return getTransferSolInstruction({ source: from, destination: to, amount: BigInt(lamports) });
}

export const TOKEN_PROGRAM = TOKEN_PROGRAM_ADDRESS;
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** The associated token account of `owner` for `mint` under `tokenProgram` (SPL Token by default). */
export async function ata(owner, mint = USDC, tokenProgram = TOKEN_PROGRAM_ADDRESS) {
  const [pda] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
  return pda;
}

/**
 * CreateIdempotent(recipient ATA) + TransferChecked + Memo, signed by
 * `sender`, for a mint of either token program.
 */
export async function tokenPaymentInstructions(sender, recipient, amount, memo, { mint, tokenProgram = TOKEN_PROGRAM_ADDRESS, decimals = 6 }) {
  const source = await ata(sender.address, mint, tokenProgram);
  const destination = await ata(recipient, mint, tokenProgram);
  return [
    getCreateAssociatedTokenIdempotentInstruction({ payer: sender, ata: destination, owner: recipient, mint, tokenProgram }),
    getTransferCheckedInstruction(
      { source, mint, destination, authority: sender, amount: BigInt(amount), decimals },
      { programAddress: tokenProgram },
    ),
    memoInstruction(memo, [sender]),
  ];
}

/** CreateIdempotent(recipient ATA) + TransferChecked + Memo, signed by `sender`. */
export async function usdcPaymentInstructions(sender, recipient, amount, memo, mint = USDC) {
  return tokenPaymentInstructions(sender, recipient, amount, memo, { mint });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
