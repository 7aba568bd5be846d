#!/usr/bin/env node
// The baseline of BenchmarkPayLatency (paylatency_test.go): what an agent
// holding its own key spends between having a seller's 402 answer and
// having the payment header, measured with the official client packages
// only: @x402/fetch's steps (@x402/core's x402HTTPClient with @x402/svm's
// ExactSvmScheme) for an x402 challenge, and mppx's client with
// @solana/mpp's Solana charge for an MPP one. Both read the chain as they
// always do (the mint once, a blockhash per payment unless the challenge
// carries one), against the same localnet as the service.
//
// It is a signing loop the benchmark drives: it prints one JSON line
// {"ready": true, "x402": [addresses], "mpp": [addresses]} once its keys
// exist, then answers each JSON line on stdin
// {"op": "x402"|"mpp", "challenge": …, "clients": c, "n": n, "warm": w}
// with one line {"latencies_ms": [...], "seconds": s, "errors": e,
// "error": first error, "header": name, "value": a header value}.
// challenge is the PAYMENT-REQUIRED header's value (base64) for x402, the
// WWW-Authenticate value for MPP. c clients are c keys signing
// concurrently in this one process (Node runs their JavaScript on one
// thread; Ed25519 signatures run on libuv's thread pool).
//
// Usage: node x402-local-sign.mjs --rpc http://127.0.0.1:8899 [--clients 32]
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Imports a package's ESM entry from one example's node_modules (this file
 * sits outside them, so bare specifiers would not resolve): its exports for
 * the subpath under the conditions Node's import matches (node, import,
 * default), the first listed winning, as Node's own resolution does.
 */
async function load(example, specifier) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const sub = '.' + specifier.slice(name.length);
  const dir = join(root, 'examples', example, 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  let entry = pkg.exports?.[sub] ?? (sub === '.' ? pkg.exports ?? pkg.module ?? pkg.main : undefined);
  while (entry && typeof entry === 'object') {
    const key = Object.keys(entry).find((k) => ['node', 'import', 'default'].includes(k));
    entry = key && entry[key];
  }
  if (typeof entry !== 'string') throw new Error(`${specifier}: no ESM entry in ${dir}/package.json`);
  return import(pathToFileURL(join(dir, entry)).href);
}

const { values } = parseArgs({ options: { rpc: { type: 'string' }, clients: { type: 'string' } } });
if (!values.rpc) {
  process.stderr.write('usage: node x402-local-sign.mjs --rpc RPC_URL [--clients N]\n');
  process.exit(2);
}
const rpcUrl = values.rpc;
const clients = Number(values.clients ?? '32');

const { x402Client, x402HTTPClient } = await load('x402-seller', '@x402/core/client');
const { ExactSvmScheme } = await load('x402-seller', '@x402/svm/exact/client');
const x402Kit = await load('x402-seller', '@solana/kit');
const { Mppx, solana } = await load('mpp-seller', '@solana/mpp/client');
const mppKit = await load('mpp-seller', '@solana/kit');

// One key per client and protocol, each with its own client objects (and
// so its own mint cache), as separate agents would have.
const x402Buyers = [];
const mppBuyers = [];
for (let i = 0; i < clients; i++) {
  const signer = await x402Kit.generateKeyPairSigner();
  const client = new x402Client().register('solana:*', new ExactSvmScheme(signer, { rpcUrl }));
  x402Buyers.push({ address: signer.address, client, http: new x402HTTPClient(client) });
  const mppSigner = await mppKit.generateKeyPairSigner();
  const mppx = Mppx.create({ methods: [solana.charge({ signer: mppSigner, rpcUrl })], polyfill: false });
  mppBuyers.push({ address: mppSigner.address, mppx });
}

/** x402: from the 402's headers to the PAYMENT-SIGNATURE header, @x402/fetch's steps. */
async function signX402(buyer, headers) {
  const paymentRequired = buyer.http.getPaymentRequiredResponse((name) => headers.get(name), undefined);
  await buyer.http.handlePaymentRequired(paymentRequired, 'http://seller.invalid/');
  const payload = await buyer.client.createPaymentPayload(paymentRequired);
  const out = buyer.http.encodePaymentSignatureHeader(payload);
  const [header, value] = Object.entries(out)[0];
  return { header, value };
}

/** MPP: from the 402 response to the Authorization credential. */
async function signMPP(buyer, response) {
  return { header: 'Authorization', value: await buyer.mppx.createCredential(response) };
}

/** Runs n signings from c concurrent clients (warm more first, unmeasured). */
async function run({ op, challenge, clients: c, n, warm = 0 }) {
  c = Math.max(1, Math.min(c, clients));
  // What the agent holds when it starts: the 402 answer.
  const answer = () => (op === 'mpp'
    ? new Response(null, { status: 402, headers: { 'WWW-Authenticate': challenge } })
    : new Headers({ 'PAYMENT-REQUIRED': challenge }));
  const sign = op === 'mpp' ? (i, a) => signMPP(mppBuyers[i], a) : (i, a) => signX402(x402Buyers[i], a);
  const out = { latencies_ms: [], seconds: 0, errors: 0 };
  const loop = async (total, record) => {
    let next = 0;
    await Promise.all(Array.from({ length: c }, async (_, w) => {
      for (let i = next++; i < total; i = next++) {
        const a = answer();
        const t0 = performance.now();
        try {
          const h = await sign(w, a);
          if (!record) continue;
          out.latencies_ms[i] = performance.now() - t0;
          if (out.value === undefined) Object.assign(out, h);
        } catch (e) {
          if (record) {
            out.latencies_ms[i] = performance.now() - t0;
            out.errors++;
            out.error ??= String(e?.stack ?? e);
          }
        }
      }
    }));
  };
  await loop(warm, false);
  const start = performance.now();
  await loop(n, true);
  out.seconds = (performance.now() - start) / 1000;
  return out;
}

process.stdout.write(`${JSON.stringify({ ready: true, x402: x402Buyers.map((b) => b.address), mpp: mppBuyers.map((b) => b.address) })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let res;
  try {
    res = await run(JSON.parse(line));
  } catch (e) {
    res = { error: String(e?.stack ?? e), latencies_ms: [], errors: 1 };
  }
  process.stdout.write(`${JSON.stringify(res)}\n`);
}
