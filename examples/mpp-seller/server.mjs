#!/usr/bin/env node
// An MPP seller (the "Payment" HTTP authentication scheme, Solana `charge`
// intent, pull mode) built only with the official packages, mppx and
// @solana/mpp, on plain node:http. The buyer signs a transaction; the
// packages verify it, co-sign it as fee payer when the seller pays the fee,
// broadcast it to a Solana RPC node (our localnet in tests and `make dev`),
// confirm it and answer 200 with a Payment-Receipt. Every payment it accepts
// is verified and settled by code this project did not write.
//
// Usage: node server.mjs --rpc http://127.0.0.1:8899 [--port 0] [--price 10000] ...
// (see README.md). Prints one JSON line to stdout once it listens.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKeyPairSignerFromBytes, generateKeyPairSigner, isAddress } from '@solana/kit';
import { resolveStablecoinMint } from '@solana/mpp';
import { Expires, Mppx, solana } from '@solana/mpp/server';

const USDC = {
  devnet: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  'mainnet-beta': 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
};
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
// What a fee payer made here gets from the localnet: enough for thousands of payments.
const FEE_PAYER_LAMPORTS = 100_000_000_000;
const amountRe = /^[1-9]\d{0,18}$/;

/** Reads the configuration from flags, then MPP_SELLER_* environment variables, then defaults. */
export function config(argv = process.argv.slice(2), env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rpc: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      network: { type: 'string' },
      currency: { type: 'string' },
      decimals: { type: 'string' },
      'token-program': { type: 'string' },
      recipient: { type: 'string' },
      price: { type: 'string' },
      splits: { type: 'string' },
      'fee-payer': { type: 'string' },
      'external-id': { type: 'string' },
      description: { type: 'string' },
      expires: { type: 'string' },
      realm: { type: 'string' },
      'requires-auth': { type: 'boolean' },
    },
  });
  const pick = (flag, name, dflt) => values[flag] ?? env[name] ?? dflt;
  const cfg = {
    rpcUrl: pick('rpc', 'MPP_SELLER_RPC_URL', 'http://127.0.0.1:8899'),
    host: pick('host', 'MPP_SELLER_HOST', '127.0.0.1'),
    port: Number(pick('port', 'MPP_SELLER_PORT', '4022')),
    network: pick('network', 'MPP_SELLER_NETWORK', 'devnet'),
    currency: pick('currency', 'MPP_SELLER_CURRENCY', ''),
    decimals: Number(pick('decimals', 'MPP_SELLER_DECIMALS', '6')),
    tokenProgram: pick('token-program', 'MPP_SELLER_TOKEN_PROGRAM', ''),
    recipient: pick('recipient', 'MPP_SELLER_RECIPIENT', ''),
    price: pick('price', 'MPP_SELLER_PRICE', '10000'),
    splits: JSON.parse(pick('splits', 'MPP_SELLER_SPLITS', '[]')),
    feePayer: pick('fee-payer', 'MPP_SELLER_FEE_PAYER', ''),
    externalId: pick('external-id', 'MPP_SELLER_EXTERNAL_ID', ''),
    description: pick('description', 'MPP_SELLER_DESCRIPTION', 'Weather report'),
    expiresSeconds: Number(pick('expires', 'MPP_SELLER_EXPIRES', '300')),
    realm: pick('realm', 'MPP_REALM', 'mpp-seller'),
    requiresAuth: values['requires-auth'] ?? ['1', 'true'].includes(env.MPP_SELLER_REQUIRES_AUTH ?? ''),
    secretKey: env.MPP_SECRET_KEY || randomBytes(32).toString('hex'),
  };
  if (!USDC[cfg.network]) throw new Error(`unsupported network ${cfg.network}: use devnet or mainnet-beta`);
  cfg.currency ||= USDC[cfg.network];
  if (cfg.currency.toLowerCase() === 'sol') throw new Error('--currency sol: this seller prices in a token');
  if (!amountRe.test(cfg.price)) throw new Error(`--price must be a positive integer of base units (USDC: 6 decimals), got ${cfg.price}`);
  if (!Number.isInteger(cfg.decimals) || cfg.decimals < 0 || cfg.decimals > 255) throw new Error(`bad --decimals ${cfg.decimals}`);
  if (cfg.tokenProgram && ![TOKEN_PROGRAM, TOKEN_2022_PROGRAM].includes(cfg.tokenProgram)) {
    throw new Error(`--token-program must be ${TOKEN_PROGRAM} or ${TOKEN_2022_PROGRAM}`);
  }
  if (!Number.isInteger(cfg.port) || cfg.port < 0 || cfg.port > 65535) throw new Error(`bad port ${cfg.port}`);
  if (cfg.recipient && !isAddress(cfg.recipient)) throw new Error(`--recipient is not a Solana address: ${cfg.recipient}`);
  if (!Number.isInteger(cfg.expiresSeconds) || cfg.expiresSeconds < 1) throw new Error(`bad --expires ${cfg.expiresSeconds}`);
  if (!Array.isArray(cfg.splits)) throw new Error('--splits must be a JSON array');
  for (const s of cfg.splits) {
    if (!isAddress(s?.recipient ?? '') || !amountRe.test(s?.amount ?? '')) {
      throw new Error(`--splits: each entry needs a recipient address and a positive amount string, got ${JSON.stringify(s)}`);
    }
  }
  return cfg;
}

/** One JSON-RPC call (the localnet's cheat methods, which @solana/kit does not know). */
async function rpcCall(url, method, params) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The fee payer: none, a fresh key ("new"), or a solana-keygen JSON file. */
async function feePayerSigner(spec) {
  if (!spec) return undefined;
  if (spec === 'new') return generateKeyPairSigner();
  return createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(spec, 'utf8'))));
}

/**
 * Starts the seller. Returns { url, recipient, feePayer, network, currency, decimals, tokenProgram,
 * price, splits, realm, externalId, close() }.
 *
 * The official server refuses to create the recipient's token account (and a
 * split's, when it pays the fee and the split does not ask for one), so those
 * must exist before the first payment: they are created here with the
 * localnet's cheat method (surfnet_setTokenAccount), and a fee payer with less
 * than 1 SOL is given 100 (surfnet_setAccount). Nothing else is created on
 * chain but by the payments.
 */
export async function startSeller(cfg, { log = (m) => process.stderr.write(`mpp-seller: ${m}\n`) } = {}) {
  const signer = await feePayerSigner(cfg.feePayer);
  const recipient = cfg.recipient || (await generateKeyPairSigner()).address;
  const mint = resolveStablecoinMint(cfg.currency, cfg.network);

  // Every account the buyer's transaction does not create must exist: the
  // recipient's, and each split's unless the seller pays the fee and the
  // split asks the transaction to create it (our buyer never pays to create
  // one; the official client does when it pays the fee, so this also suits it).
  const needAccounts = [recipient, ...cfg.splits.filter((s) => !(signer && s.ataCreationRequired)).map((s) => s.recipient)];
  for (const owner of needAccounts) {
    await rpcCall(cfg.rpcUrl, 'surfnet_setTokenAccount', [owner, mint, {}]);
  }
  if (signer) {
    const { value } = await rpcCall(cfg.rpcUrl, 'getBalance', [signer.address, { commitment: 'confirmed' }]);
    if (value < 1_000_000_000) await rpcCall(cfg.rpcUrl, 'surfnet_setAccount', [signer.address, { lamports: FEE_PAYER_LAMPORTS }]);
  }

  const mppx = Mppx.create({
    secretKey: cfg.secretKey,
    realm: cfg.realm,
    ...(cfg.requiresAuth ? { requiresAuth: true } : {}),
    methods: [
      solana.charge({
        recipient,
        currency: cfg.currency,
        decimals: cfg.decimals,
        ...(cfg.tokenProgram ? { tokenProgram: cfg.tokenProgram } : {}),
        network: cfg.network,
        rpcUrl: cfg.rpcUrl,
        ...(cfg.splits.length ? { splits: cfg.splits } : {}),
        ...(signer ? { signer } : {}),
      }),
    ],
  });
  // The route's handler is made per request: its expiry is a time, not a duration.
  const weather = () =>
    Mppx.toNodeListener(
      mppx.charge({
        amount: cfg.price,
        description: cfg.description,
        expires: Expires.seconds(cfg.expiresSeconds),
        ...(cfg.externalId ? { externalId: cfg.externalId } : {}),
      }),
    );

  const server = http.createServer(async (req, res) => {
    try {
      const path = new URL(req.url, 'http://seller').pathname;
      if (req.method === 'GET' && path === '/health') {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ ok: true }));
      }
      if (req.method !== 'GET' || path !== '/weather') {
        res.statusCode = 404;
        return res.end();
      }
      const result = await weather()(req, res); // a 402 (or a refusal) is already written
      if (result.status === 402) {
        if (req.headers.authorization || req.headers['payment-authorization']) log(`refused a credential: ${res.statusCode}`);
        return;
      }
      log(`paid: ${res.getHeader('payment-receipt')}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ report: 'sunny', temperatureC: 21, route: path, paidAt: new Date().toISOString() }));
    } catch (e) {
      log(`request failed: ${e?.stack ?? e}`);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, resolve);
  });
  return {
    url: `http://${cfg.host}:${server.address().port}`,
    recipient,
    feePayer: signer?.address ?? '',
    network: cfg.network,
    currency: cfg.currency,
    mint,
    decimals: cfg.decimals,
    tokenProgram: cfg.tokenProgram,
    price: cfg.price,
    splits: cfg.splits,
    realm: cfg.realm,
    externalId: cfg.externalId,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (isMain) {
  let seller;
  try {
    seller = await startSeller(config());
  } catch (e) {
    process.stderr.write(`mpp-seller: ${e?.message ?? e}\n`);
    process.exit(1);
  }
  const { close, ...ready } = seller;
  process.stdout.write(`${JSON.stringify({ ready: true, ...ready })}\n`);
  const stop = () => close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
