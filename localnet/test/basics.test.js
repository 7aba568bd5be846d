import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, sleep } from '../testing/helpers.js';

let net;
before(async () => {
  net = await start({ slotMs: 40 });
});
after(() => net.close());

test('getHealth and getVersion', async () => {
  assert.equal(await net.rpc('getHealth'), 'ok');
  const v = await net.rpc('getVersion');
  assert.match(v['solana-core'], /^2\./);
  assert.equal(typeof v['feature-set'], 'number');
  const h = await fetch(`${net.url}/health`);
  assert.equal(await h.text(), 'ok');
});

test('slots and block height advance on the timer', async () => {
  const s1 = await net.rpc('getSlot');
  const h1 = await net.rpc('getBlockHeight');
  await sleep(250);
  const s2 = await net.rpc('getSlot');
  const h2 = await net.rpc('getBlockHeight');
  assert.ok(s2 >= s1 + 3, `slot ${s1} -> ${s2}`);
  assert.ok(h2 >= h1 + 3, `height ${h1} -> ${h2}`);
  const info = await net.rpc('getEpochInfo');
  assert.ok(info.absoluteSlot >= s2);
});

test('responses carry context.slot and apiVersion', async () => {
  const r = await net.rpc('getLatestBlockhash');
  assert.equal(typeof r.context.slot, 'number');
  assert.match(r.context.apiVersion, /^2\./);
  assert.equal(typeof r.value.blockhash, 'string');
  assert.equal(typeof r.value.lastValidBlockHeight, 'number');
});

test('JSON-RPC errors: unknown method, parse error, invalid params, invalid request', async () => {
  const nf = await net.call('noSuchMethod', []);
  assert.deepEqual(nf.error, { code: -32601, message: 'Method not found' });
  const pe = await net.raw('{"jsonrpc":"2.0","id":1,');
  assert.equal(pe.json.error.code, -32700);
  assert.equal(pe.json.id, null);
  const ip = await net.call('getBalance', ['not-a-pubkey']);
  assert.equal(ip.error.code, -32602);
  const ip2 = await net.call('getBalance', []);
  assert.equal(ip2.error.code, -32602);
  const ir = await net.raw({ id: 5, method: 'getSlot' });
  assert.equal(ir.json.error.code, -32600);
  const get = await fetch(net.url);
  assert.equal(get.status, 405);
});

test('batch requests', async () => {
  const r = await net.raw([
    { jsonrpc: '2.0', id: 1, method: 'getSlot' },
    { jsonrpc: '2.0', id: 2, method: 'getHealth' },
    { jsonrpc: '2.0', id: 3, method: 'nope' },
  ]);
  assert.equal(r.status, 200);
  assert.equal(r.json.length, 3);
  assert.equal(typeof r.json[0].result, 'number');
  assert.equal(r.json[1].result, 'ok');
  assert.equal(r.json[2].error.code, -32601);
  assert.deepEqual(r.json.map((x) => x.id), [1, 2, 3]);
  const empty = await net.raw([]);
  assert.equal(empty.json.error.code, -32600);
});

test('rent, fees, prioritization fees', async () => {
  assert.equal(await net.rpc('getMinimumBalanceForRentExemption', [165]), 2039280);
  assert.equal(await net.rpc('getMinimumBalanceForRentExemption', [0]), 890880);
  const fees = await net.rpc('getRecentPrioritizationFees', [[]]);
  assert.ok(Array.isArray(fees) && fees.length > 0);
  assert.deepEqual(Object.keys(fees[0]).sort(), ['prioritizationFee', 'slot']);
});
