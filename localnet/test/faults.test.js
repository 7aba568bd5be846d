import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { start, newWallet, buildTx, transferSol, kit } from '../testing/helpers.js';

let net;
before(async () => {
  net = await start();
});
after(() => net.close());
afterEach(() => net.rpc('localnet_setFaults', [{}]));

const bal = async (a) => (await net.rpc('getBalance', [a])).value;

test('setFaults/getFaults: missing fields reset to off', async () => {
  const off = { latencyMs: 0, dropRate: 0, failSends: false, down: false, historySlot: null };
  assert.deepEqual(await net.rpc('localnet_getFaults'), off);
  await net.rpc('localnet_setFaults', [{ latencyMs: 10, failSends: true }]);
  assert.deepEqual(await net.rpc('localnet_getFaults'), { ...off, latencyMs: 10, failSends: true });
  const r = await net.rpc('localnet_setFaults', [{ dropRate: 0.5 }]);
  assert.deepEqual(r, { ...off, dropRate: 0.5 });
  const bad = await net.call('localnet_setFaults', [{ dropRate: 2 }]);
  assert.equal(bad.error.code, -32602);
  const badSlot = await net.call('localnet_setFaults', [{ historySlot: -1 }]);
  assert.equal(badSlot.error.code, -32602);
});

test('latencyMs delays every answer except cheat/fault methods', async () => {
  await net.rpc('localnet_setFaults', [{ latencyMs: 300 }]);
  let t = Date.now();
  await net.rpc('getSlot');
  assert.ok(Date.now() - t >= 290, `getSlot took ${Date.now() - t} ms`);
  t = Date.now();
  await net.rpc('localnet_getFaults');
  await net.rpc('surfnet_setAccount', [(await kit.generateKeyPairSigner()).address, { lamports: 1 }]);
  assert.ok(Date.now() - t < 250, 'cheat/fault methods are not delayed');
});

test('dropRate: the signature is returned but the transaction never lands', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  await net.rpc('localnet_setFaults', [{ dropRate: 1 }]);
  assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);
  await net.rpc('localnet_advance', [{ slots: 2 }]);
  assert.deepEqual((await net.rpc('getSignatureStatuses', [[tx.signature]])).value, [null]);
  assert.equal(await bal(dest.address), 0);
  // a rebroadcast after the fault is cleared lands
  await net.rpc('localnet_setFaults', [{}]);
  assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);
  assert.equal(await bal(dest.address), 1_000_000_000);
});

test('failSends: sendTransaction answers an error and does not execute', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  await net.rpc('localnet_setFaults', [{ failSends: true }]);
  const r = await net.call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  assert.equal(r.error.code, -32005);
  assert.match(r.error.message, /unhealthy/);
  assert.equal(await bal(dest.address), 0);
  assert.equal(await net.rpc('getHealth'), 'ok', 'other methods still work');
});

test('down: every non-localnet method answers HTTP 503', async () => {
  await net.rpc('localnet_setFaults', [{ down: true }]);
  const r = await net.raw({ jsonrpc: '2.0', id: 1, method: 'getHealth' });
  assert.equal(r.status, 503);
  const b = await net.raw([{ jsonrpc: '2.0', id: 1, method: 'getSlot' }]);
  assert.equal(b.status, 503);
  const h = await fetch(`${net.url}/health`);
  assert.equal(h.status, 503);
  const f = await net.raw({ jsonrpc: '2.0', id: 1, method: 'localnet_getFaults' });
  assert.equal(f.status, 200);
  assert.equal(f.json.result.down, true);
  await net.rpc('localnet_setFaults', [{ down: false }]);
  assert.equal(await net.rpc('getHealth'), 'ok');
});

test('historySlot: the history methods answer as a backend stuck at that slot, the rest stays current', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  const stuck = await net.rpc('getSlot');
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);
  await net.rpc('localnet_advance', [{ slots: 3 }]);
  await net.rpc('localnet_setFaults', [{ historySlot: stuck }]);

  const st = await net.rpc('getSignatureStatuses', [[tx.signature], { searchTransactionHistory: true }]);
  assert.equal(st.context.slot, stuck, 'the statuses carry the stuck context slot');
  assert.deepEqual(st.value, [null]);
  assert.equal(await net.rpc('getTransaction', [tx.signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]), null);
  const listed = await net.rpc('getSignaturesForAddress', [dest.address, { commitment: 'confirmed' }]);
  assert.ok(!listed.some((s) => s.signature === tx.signature), 'the signature is left out');
  const later = await net.call('getSignaturesForAddress', [dest.address, { commitment: 'confirmed', minContextSlot: stuck + 1 }]);
  assert.equal(later.error.code, -32016);
  assert.equal(later.error.data.contextSlot, stuck);
  // Height, slot and balances stay current.
  assert.ok((await net.rpc('getSlot')) > stuck);
  assert.equal(await bal(dest.address), 1_000_000_000);

  // Caught up: everything is seen.
  await net.rpc('localnet_setFaults', [{}]);
  const caught = await net.rpc('getSignatureStatuses', [[tx.signature], { searchTransactionHistory: true }]);
  assert.ok(caught.context.slot > stuck);
  assert.equal(caught.value[0].confirmationStatus, 'confirmed');
  assert.ok(await net.rpc('getTransaction', [tx.signature, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]));
  const all = await net.rpc('getSignaturesForAddress', [dest.address, { commitment: 'confirmed', minContextSlot: stuck + 1 }]);
  assert.ok(all.some((s) => s.signature === tx.signature));
});
