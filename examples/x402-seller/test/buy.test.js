// End to end with code this project did not write: a buyer made of the
// official x402 client packages buys from the seller (official middleware
// and facilitator) on a private localnet; the chain shows the payment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startSeller, config } from '../server.js';
import { buy } from '../buy.js';

const LOCALNET = fileURLToPath(new URL('../../../localnet/server.js', import.meta.url));

let chain;
let rpcUrl;
let seller;

async function rpc(method, params) {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** owner's USDC in atomic units (0 without a token account). */
async function usdc(owner) {
  const r = await rpc('getTokenAccountsByOwner', [owner, { mint: seller.asset }, { encoding: 'jsonParsed', commitment: 'confirmed' }]);
  return r.value.length ? BigInt(r.value[0].account.data.parsed.info.tokenAmount.amount) : 0n;
}

before(async () => {
  chain = spawn(process.execPath, [LOCALNET, '--port', '0', '--slot-ms', '100'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  chain.stdout.setEncoding('utf8');
  while (!out.includes('\n')) {
    const [chunk] = await once(chain.stdout, 'data');
    out += chunk;
  }
  rpcUrl = out.match(/localnet ready (\S+)/)[1];
  chain.stdout.resume();
  seller = await startSeller(config(['--rpc', rpcUrl, '--port', '0', '--price', '12345', '--premium-price', '250000']));
});

after(async () => {
  await seller?.close();
  chain?.kill('SIGTERM');
});

for (const [path, price, version] of [
  ['/weather', 12345n, 2],
  ['/premium', 250000n, 2],
  ['/memo/weather', 12345n, 2],
  ['/v1/weather', 12345n, 1],
]) {
  test(`official client buys ${path} (x402 v${version}): seller +${price}, buyer pays no SOL`, async () => {
    const before = await usdc(seller.payTo);
    const out = await buy({ rpcUrl, url: seller.url + path, usdc: '1000000', asset: seller.asset });
    assert.equal(out.status, 200, out.body);
    assert.equal(JSON.parse(out.body).route, path);
    assert.equal(out.paymentResponse.success, true);
    assert.equal(out.paymentResponse.payer, out.buyer);
    assert.equal(out.paymentResponse.network, version === 2 ? seller.network : seller.networkV1);
    assert.equal(await usdc(seller.payTo), before + price);
    assert.equal(await usdc(out.buyer), 1000000n - price);
    assert.equal((await rpc('getBalance', [out.buyer, { commitment: 'confirmed' }])).value, 0);

    // The settlement is on chain: the fee payer signed first, the buyer second, both recorded.
    const sig = out.paymentResponse.transaction;
    const tx = await rpc('getTransaction', [sig, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }]);
    assert.equal(tx.meta.err, null);
    assert.equal(tx.version, 0);
    assert.deepEqual(tx.transaction.message.accountKeys.slice(0, 2), [seller.feePayer, out.buyer]);
    if (path === '/memo/weather') assert.ok(tx.meta.logMessages.includes(`Program log: ${seller.memo}`));
    assert.ok(seller.settlements.some((s) => s.transaction === sig && s.success));
  });
}

test('a buyer without enough USDC gets a 402 and nothing moves', async () => {
  const before = await usdc(seller.payTo);
  const settled = seller.settlements.length;
  const out = await buy({ rpcUrl, url: `${seller.url}/weather`, usdc: '12344', asset: seller.asset });
  assert.equal(out.status, 402);
  assert.equal(await usdc(seller.payTo), before);
  assert.equal(await usdc(out.buyer), 12344n);
  assert.equal(seller.settlements.length, settled);
});

test('the v1 route answers a 402 JSON challenge, and refuses a payment that is not base64 JSON', async () => {
  const r = await fetch(`${seller.url}/v1/weather`);
  assert.equal(r.status, 402);
  const body = await r.json();
  assert.equal(body.x402Version, 1);
  assert.equal(body.accepts[0].maxAmountRequired, '12345');
  assert.equal(body.accepts[0].network, 'solana-devnet');
  assert.equal(body.accepts[0].extra.feePayer, seller.feePayer);
  const bad = await fetch(`${seller.url}/v1/weather`, { headers: { 'X-PAYMENT': '!!' } });
  assert.equal(bad.status, 402);
});
