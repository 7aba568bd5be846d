#!/usr/bin/env node
// An x402 seller built with the official x402 packages, and its facilitator
// (from the same packages) in the same process, settling on a Solana RPC
// node: our localnet in tests and `make dev`. Every payment it accepts is
// verified and settled by code this project did not write.
//
// Usage: node server.js --rpc http://127.0.0.1:8899 [--port 0] [--price 10000] ...
// (see README.md). Prints one JSON line to stdout once it listens.
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { x402Facilitator } from '@x402/core/facilitator';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { registerExactSvmScheme as registerFacilitatorScheme } from '@x402/svm/exact/facilitator';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { generateKeyPairSigner, isAddress } from '@solana/kit';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

export const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const V1_NAMES = { [DEVNET]: 'solana-devnet', [MAINNET]: 'solana' };
const USDC = {
  [DEVNET]: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  [MAINNET]: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
};
// What the fee payer gets from the localnet at start: enough for thousands of settlements.
const FEE_PAYER_LAMPORTS = 100_000_000_000n;

/** Reads the configuration from flags, then SELLER_* environment variables, then defaults. */
export function config(argv = process.argv.slice(2), env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rpc: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      network: { type: 'string' },
      asset: { type: 'string' },
      'pay-to': { type: 'string' },
      price: { type: 'string' },
      'premium-price': { type: 'string' },
      memo: { type: 'string' },
      'max-timeout': { type: 'string' },
      'challenge-blockhash': { type: 'boolean' },
    },
  });
  const pick = (flag, name, dflt) => values[flag] ?? env[name] ?? dflt;
  const cfg = {
    rpcUrl: pick('rpc', 'SELLER_RPC_URL', 'http://127.0.0.1:8899'),
    host: pick('host', 'SELLER_HOST', '127.0.0.1'),
    port: Number(pick('port', 'SELLER_PORT', '4021')),
    network: pick('network', 'SELLER_NETWORK', DEVNET),
    asset: pick('asset', 'SELLER_ASSET', ''),
    payTo: pick('pay-to', 'SELLER_PAY_TO', ''),
    price: pick('price', 'SELLER_PRICE', '10000'),
    premiumPrice: pick('premium-price', 'SELLER_PREMIUM_PRICE', '1000000'),
    memo: pick('memo', 'SELLER_MEMO', 'x402-seller order 42'),
    maxTimeoutSeconds: Number(pick('max-timeout', 'SELLER_MAX_TIMEOUT', '60')),
    challengeBlockhash: values['challenge-blockhash'] ?? ['1', 'true'].includes(env.SELLER_CHALLENGE_BLOCKHASH ?? ''),
  };
  if (!V1_NAMES[cfg.network]) throw new Error(`unsupported network ${cfg.network}: use ${DEVNET} or ${MAINNET}`);
  cfg.asset ||= USDC[cfg.network];
  for (const [k, v] of [['price', cfg.price], ['premium-price', cfg.premiumPrice]]) {
    if (!/^[1-9]\d{0,18}$/.test(v)) throw new Error(`--${k} must be a positive integer of atomic units (USDC: 6 decimals), got ${v}`);
  }
  if (!Number.isInteger(cfg.port) || cfg.port < 0 || cfg.port > 65535) throw new Error(`bad port ${cfg.port}`);
  if (cfg.payTo && !isAddress(cfg.payTo)) throw new Error(`--pay-to is not a Solana address: ${cfg.payTo}`);
  if (Buffer.byteLength(cfg.memo) > 256) throw new Error('--memo must be at most 256 bytes');
  return cfg;
}

/** One JSON-RPC call, for the localnet's cheat methods that @solana/kit does not know. */
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

/**
 * Starts the seller. Returns { url, payTo, feePayer, network, networkV1, asset, routes, settlements, close() }.
 * The chain must offer surfnet_setAccount and surfnet_setTokenAccount (our localnet does).
 */
export async function startSeller(cfg, { log = (m) => process.stderr.write(`x402-seller: ${m}\n`) } = {}) {
  const feePayerSigner = await generateKeyPairSigner();
  const payTo = cfg.payTo || (await generateKeyPairSigner()).address;

  // The fee payer pays every settlement's network fee; the exact scheme never
  // creates payTo's token account, so it must exist before the first payment.
  await rpcCall(cfg.rpcUrl, 'surfnet_setAccount', [feePayerSigner.address, { lamports: Number(FEE_PAYER_LAMPORTS) }]);
  await rpcCall(cfg.rpcUrl, 'surfnet_setTokenAccount', [payTo, cfg.asset, {}]);

  const facilitator = new x402Facilitator();
  registerFacilitatorScheme(facilitator, {
    signer: toFacilitatorSvmSigner(feePayerSigner, { defaultRpcUrl: cfg.rpcUrl }),
    networks: [cfg.network],
  });
  const settlements = [];
  facilitator.onAfterSettle(async ({ paymentPayload, requirements, result }) => {
    settlements.push({
      x402Version: paymentPayload.x402Version,
      network: result.network,
      transaction: result.transaction,
      payer: result.payer,
      payTo: requirements.payTo,
      amount: requirements.amount ?? requirements.maxAmountRequired,
      success: result.success,
    });
    log(`settled ${result.transaction} from ${result.payer}`);
  });
  facilitator.onSettleFailure(async ({ error }) => log(`settlement failed: ${error?.message ?? error}`));
  // The resource server talks to the facilitator in-process instead of over HTTP.
  const facilitatorClient = {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported(),
  };
  const resourceServer = new x402ResourceServer(facilitatorClient).register(
    cfg.network,
    new ExactSvmServerScheme(cfg.challengeBlockhash ? { rpcUrl: cfg.rpcUrl } : {}),
  );

  const option = (amount, extra) => ({
    scheme: 'exact',
    network: cfg.network,
    payTo,
    price: { amount, asset: cfg.asset },
    maxTimeoutSeconds: cfg.maxTimeoutSeconds,
    ...(extra ? { extra } : {}),
  });
  const routes = {
    'GET /weather': { accepts: option(cfg.price), description: 'Weather report', mimeType: 'application/json' },
    'GET /premium': { accepts: option(cfg.premiumPrice), description: 'Premium weather report', mimeType: 'application/json' },
    'GET /memo/weather': {
      accepts: option(cfg.price, { memo: cfg.memo }),
      description: 'Weather report (the seller names the memo)',
      mimeType: 'application/json',
    },
  };

  const app = express();
  app.get('/health', (_req, res) => res.json({ ok: true }));
  app.get('/_settlements', (_req, res) => res.json({ settlements }));
  app.get('/v1/weather', v1Handler(cfg, facilitator, payTo, feePayerSigner.address, log));
  app.use(paymentMiddleware(routes, resourceServer));
  const report = (req, res) =>
    res.json({ report: 'sunny', temperatureC: 21, route: req.path, paidAt: new Date().toISOString() });
  app.get('/weather', report);
  app.get('/premium', report);
  app.get('/memo/weather', report);

  const server = await new Promise((resolve, reject) => {
    const s = app.listen(cfg.port, cfg.host, () => resolve(s));
    s.once('error', reject);
  });
  const url = `http://${cfg.host}:${server.address().port}`;
  return {
    url,
    payTo,
    feePayer: feePayerSigner.address,
    network: cfg.network,
    networkV1: V1_NAMES[cfg.network],
    asset: cfg.asset,
    memo: cfg.memo,
    routes: {
      '/weather': { amount: cfg.price, x402Version: 2 },
      '/premium': { amount: cfg.premiumPrice, x402Version: 2 },
      '/memo/weather': { amount: cfg.price, x402Version: 2, memo: cfg.memo },
      '/v1/weather': { amount: cfg.price, x402Version: 1 },
    },
    settlements,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A route with x402 v1's challenge: a 402 JSON body and the X-PAYMENT header.
 * The packages' middleware speaks only v2, so this glue is ours; verification
 * and settlement are still the packages' v1 facilitator.
 */
function v1Handler(cfg, facilitator, payTo, feePayer, log) {
  return async (req, res) => {
    const requirements = {
      scheme: 'exact',
      network: V1_NAMES[cfg.network],
      maxAmountRequired: cfg.price,
      resource: `${req.protocol}://${req.get('host')}${req.originalUrl}`,
      description: 'Weather report (x402 v1)',
      mimeType: 'application/json',
      outputSchema: {},
      payTo,
      maxTimeoutSeconds: cfg.maxTimeoutSeconds,
      asset: cfg.asset,
      extra: { feePayer },
    };
    const challenge = (error) => res.status(402).json({ x402Version: 1, error, accepts: [requirements] });
    const header = req.get('X-PAYMENT');
    if (!header) return challenge('X-PAYMENT header is required');
    let payload;
    try {
      payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    } catch {
      return challenge('X-PAYMENT is not base64 JSON');
    }
    if (payload?.x402Version !== 1) return challenge('x402Version must be 1');
    try {
      const v = await facilitator.verify(payload, requirements);
      if (!v.isValid) return challenge(v.invalidReason ?? 'invalid payment');
      const s = await facilitator.settle(payload, requirements);
      if (!s.success) return challenge(s.errorReason ?? 'settlement failed');
      res.set('X-PAYMENT-RESPONSE', Buffer.from(JSON.stringify(s)).toString('base64'));
      res.json({ report: 'sunny', temperatureC: 21, route: req.path, paidAt: new Date().toISOString() });
    } catch (e) {
      log(`v1 payment failed: ${e?.stack ?? e}`);
      res.status(502).json({ error: 'facilitator failed' });
    }
  };
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (isMain) {
  let seller;
  try {
    seller = await startSeller(config());
  } catch (e) {
    process.stderr.write(`x402-seller: ${e?.message ?? e}\n`);
    process.exit(1);
  }
  const { settlements, close, ...ready } = seller;
  process.stdout.write(`${JSON.stringify({ ready: true, ...ready })}\n`);
  const stop = () => close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
