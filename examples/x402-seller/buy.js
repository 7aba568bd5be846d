#!/usr/bin/env node
// A buyer built only with the official x402 client packages (@x402/fetch,
// @x402/core/client, @x402/svm): it makes a fresh keypair, gives it USDC on
// the localnet (and no SOL), buys one paid URL and prints one JSON line:
// {buyer, status, body, paymentResponse}. It shows the seller accepts what
// the reference client produces; tests compare our own buyer with it.
//
// Usage: node buy.js --rpc http://127.0.0.1:8899 --url http://127.0.0.1:4021/weather [--usdc 5000000]
import { wrapFetchWithPayment, decodePaymentResponseHeader } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { ExactSvmSchemeV1 } from '@x402/svm/v1';
import { generateKeyPairSigner } from '@solana/kit';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const DEVNET_USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/** Buys url once with a new funded keypair; returns what the seller answered. */
export async function buy({ rpcUrl, url, usdc = '5000000', asset = DEVNET_USDC }) {
  const buyer = await generateKeyPairSigner();
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'surfnet_setTokenAccount', params: [buyer.address, asset, { amount: Number(usdc) }] }),
  });
  const funded = await res.json();
  if (funded.error) throw new Error(`surfnet_setTokenAccount: ${funded.error.message}`);

  const client = new x402Client()
    .register('solana:*', new ExactSvmScheme(buyer, { rpcUrl }))
    .registerV1('solana-devnet', new ExactSvmSchemeV1(buyer, { rpcUrl }))
    .registerV1('solana', new ExactSvmSchemeV1(buyer, { rpcUrl }));
  const paidFetch = wrapFetchWithPayment(fetch, client);
  const r = await paidFetch(url);
  const header = r.headers.get('PAYMENT-RESPONSE') ?? r.headers.get('X-PAYMENT-RESPONSE');
  return {
    buyer: buyer.address,
    status: r.status,
    body: await r.text(),
    paymentResponse: header ? decodePaymentResponseHeader(header) : null,
  };
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (isMain) {
  const { values } = parseArgs({ options: { rpc: { type: 'string' }, url: { type: 'string' }, usdc: { type: 'string' }, asset: { type: 'string' } } });
  if (!values.rpc || !values.url) {
    process.stderr.write('usage: node buy.js --rpc RPC_URL --url PAID_URL [--usdc ATOMIC] [--asset MINT]\n');
    process.exit(2);
  }
  try {
    const out = await buy({ rpcUrl: values.rpc, url: values.url, usdc: values.usdc, asset: values.asset });
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } catch (e) {
    process.stderr.write(`buy: ${e?.stack ?? e}\n`);
    process.exit(1);
  }
}
