import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, newWallet, buildTx, transferSol, kit } from '../testing/helpers.js';

let net;
before(async () => {
  net = await start(); // slots only move via localnet_advance
});
after(() => net.close());

test('getLatestBlockhash: lastValidBlockHeight = blockHeight + 150, new hash every slot', async () => {
  const h = await net.rpc('getBlockHeight');
  const a = await net.rpc('getLatestBlockhash', [{ commitment: 'finalized' }]);
  assert.equal(a.value.lastValidBlockHeight, h + 150);
  const adv = await net.rpc('localnet_advance', [{ slots: 1 }]);
  assert.equal(adv.blockHeight, h + 1);
  const b = await net.rpc('getLatestBlockhash');
  assert.notEqual(b.value.blockhash, a.value.blockhash);
  assert.equal(b.value.lastValidBlockHeight, h + 151);
});

test('isBlockhashValid: valid for 150 blocks, then expired; unknown is invalid', async () => {
  const { value } = await net.rpc('getLatestBlockhash');
  assert.equal((await net.rpc('isBlockhashValid', [value.blockhash])).value, true);
  await net.rpc('localnet_advance', [{ slots: 150 }]);
  assert.equal((await net.rpc('getBlockHeight')), value.lastValidBlockHeight);
  assert.equal((await net.rpc('isBlockhashValid', [value.blockhash])).value, true);
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  assert.equal((await net.rpc('isBlockhashValid', [value.blockhash])).value, false);
  const unknown = kit.getBase58Decoder().decode(new Uint8Array(32).fill(7));
  assert.equal((await net.rpc('isBlockhashValid', [unknown])).value, false);
});

test('an older but still valid blockhash is accepted', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  const old = (await net.rpc('getLatestBlockhash')).value.blockhash;
  await net.rpc('localnet_advance', [{ slots: 100 }]);
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)], { blockhash: old });
  assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);
  assert.equal((await net.rpc('getBalance', [dest.address])).value, 1_000_000_000);
});

test('expired blockhash: preflight error BlockhashNotFound; skipPreflight drops silently', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  const old = (await net.rpc('getLatestBlockhash')).value.blockhash;
  await net.rpc('localnet_advance', [{ slots: 151 }]);
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)], { blockhash: old });

  const r = await net.call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  assert.equal(r.error.code, -32002);
  assert.equal(r.error.message, 'Transaction simulation failed: Blockhash not found');
  assert.equal(r.error.data.err, 'BlockhashNotFound');
  assert.deepEqual(r.error.data.logs, []);
  assert.equal(r.error.data.accounts, null);

  const sig = await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64', skipPreflight: true }]);
  assert.equal(sig, tx.signature);
  await net.rpc('localnet_advance', [{ slots: 2 }]);
  const st = await net.rpc('getSignatureStatuses', [[sig], { searchTransactionHistory: true }]);
  assert.deepEqual(st.value, [null]);
  assert.equal((await net.rpc('getBalance', [dest.address])).value, 0);

  const fee = await net.rpc('getFeeForMessage', [tx.messageBase64]);
  assert.equal(fee.value, null);
  const sim = await net.rpc('simulateTransaction', [tx.base64, { encoding: 'base64' }]);
  assert.equal(sim.value.err, 'BlockhashNotFound');
  const simR = await net.rpc('simulateTransaction', [tx.base64, { encoding: 'base64', replaceRecentBlockhash: true }]);
  assert.equal(simR.value.err, null);
  assert.equal(typeof simR.value.replacementBlockhash.blockhash, 'string');
});
