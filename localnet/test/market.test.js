import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { start, newWallet, buildTx, transferSol, kit } from '../testing/helpers.js';
import { parseArgs } from '../server.js';

const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';

function cuLimit(units) {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: COMPUTE_BUDGET, accounts: [], data };
}

function cuPrice(microLamports) {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, BigInt(microLamports), true);
  return { programAddress: COMPUTE_BUDGET, accounts: [], data };
}

let net;
before(async () => {
  net = await start();
});
after(() => net.close());
afterEach(() => net.rpc('localnet_setMarket', [{}]));

const bal = async (a) => (await net.rpc('getBalance', [a])).value;

test('setMarket/getMarket: off by default, a missing field resets to off, bad values refused', async () => {
  assert.deepEqual(await net.rpc('localnet_getMarket'), { minPriorityFee: 0 });
  assert.deepEqual(await net.rpc('localnet_setMarket', [{ minPriorityFee: 50_000 }]), { minPriorityFee: 50_000 });
  assert.deepEqual(await net.rpc('localnet_getMarket'), { minPriorityFee: 50_000 });
  assert.deepEqual(await net.rpc('localnet_setMarket', [{}]), { minPriorityFee: 0 });
  assert.equal((await net.call('localnet_setMarket', [{ minPriorityFee: -1 }])).error.code, -32602);
  assert.equal((await net.call('localnet_setMarket', [{ minPriorityFee: 'lots' }])).error.code, -32602);
  // setFaults does not touch the market
  await net.rpc('localnet_setMarket', [{ minPriorityFee: 7 }]);
  await net.rpc('localnet_setFaults', [{}]);
  assert.deepEqual(await net.rpc('localnet_getMarket'), { minPriorityFee: 7 });
});

test('congested: below the minimum price the signature comes back but nothing lands; at it, it lands', async () => {
  const payer = await newWallet(net, 2n);
  const dest = await kit.generateKeyPairSigner();
  await net.rpc('localnet_setMarket', [{ minPriorityFee: 50_000 }]);

  const cheap = await buildTx(net, payer, [cuLimit(1_000), cuPrice(49_999), transferSol(payer, dest.address, 1_000_000n)]);
  assert.equal(await net.rpc('sendTransaction', [cheap.base64, { encoding: 'base64' }]), cheap.signature);
  const none = await buildTx(net, payer, [transferSol(payer, dest.address, 2_000_000n)]);
  assert.equal(await net.rpc('sendTransaction', [none.base64, { encoding: 'base64' }]), none.signature);
  await net.rpc('localnet_advance', [{ slots: 2 }]);
  assert.deepEqual((await net.rpc('getSignatureStatuses', [[cheap.signature, none.signature]])).value, [null, null]);
  assert.equal(await bal(dest.address), 0);

  const paid = await buildTx(net, payer, [cuLimit(1_000), cuPrice(50_000), transferSol(payer, dest.address, 3_000_000n)]);
  assert.equal(await net.rpc('sendTransaction', [paid.base64, { encoding: 'base64' }]), paid.signature);
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  assert.equal(await bal(dest.address), 3_000_000);
  const got = await net.rpc('getTransaction', [paid.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
  // 5000 per signature + ceil(50,000 µlamports × 1,000 units / 1e6) = 50
  assert.equal(got.meta.fee, 5_050);

  // the market cleared: the cheap one's bytes land when sent again
  await net.rpc('localnet_setMarket', [{}]);
  await net.rpc('sendTransaction', [cheap.base64, { encoding: 'base64' }]);
  assert.equal(await bal(dest.address), 4_000_000);
});

test('getRecentPrioritizationFees answers the market for every recent slot and any accounts', async () => {
  await net.rpc('localnet_advance', [{ slots: 160 }]);
  const quiet = await net.rpc('getRecentPrioritizationFees', [[]]);
  assert.equal(quiet.length, 150);
  assert.ok(quiet.every((e) => e.prioritizationFee === 0));

  await net.rpc('localnet_setMarket', [{ minPriorityFee: 50_000 }]);
  const someone = (await kit.generateKeyPairSigner()).address;
  for (const accounts of [[], [someone]]) {
    const fees = await net.rpc('getRecentPrioritizationFees', [accounts]);
    assert.equal(fees.length, 150);
    const slot = await net.rpc('getSlot');
    assert.equal(fees.at(-1).slot, slot);
    for (const e of fees) {
      assert.deepEqual(Object.keys(e).sort(), ['prioritizationFee', 'slot']);
      assert.equal(e.prioritizationFee, 50_000);
    }
  }

  // the airdrop (free) and a transaction paying more do not move the slot off the market
  const payer = await newWallet(net, 1n);
  const tx = await buildTx(net, payer, [cuLimit(1_000), cuPrice(80_000), transferSol(payer, someone, 1_000_000n)]);
  await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  const fees = await net.rpc('getRecentPrioritizationFees', [[payer.address]]);
  assert.equal(fees.at(-1).prioritizationFee, 50_000);
});

test('getStats counts calls per method, without the localnet methods; resetStats clears', async () => {
  await net.rpc('localnet_resetStats');
  await net.rpc('getSlot');
  await net.rpc('getRecentPrioritizationFees', [[]]);
  await net.rpc('getRecentPrioritizationFees', [[]]);
  await net.call('noSuchMethod');
  assert.deepEqual(await net.rpc('localnet_getStats'), { calls: { getRecentPrioritizationFees: 2, getSlot: 1 } });
  await net.rpc('localnet_resetStats');
  assert.deepEqual(await net.rpc('localnet_getStats'), { calls: {} });
});

test('CLI and environment set the starting market; default off', () => {
  assert.equal(parseArgs([], {}).minPriorityFee, 0n);
  assert.equal(parseArgs(['--min-priority-fee', '50000'], {}).minPriorityFee, 50_000n);
  assert.equal(parseArgs(['--min-priority-fee=7'], {}).minPriorityFee, 7n);
  assert.equal(parseArgs([], { LOCALNET_MIN_PRIORITY_FEE: '1200' }).minPriorityFee, 1_200n);
  assert.equal(parseArgs(['--min-priority-fee', '3'], { LOCALNET_MIN_PRIORITY_FEE: '1200' }).minPriorityFee, 3n);
  assert.throws(() => parseArgs(['--min-priority-fee', '-5'], {}), /invalid --min-priority-fee/);
  assert.throws(() => parseArgs([], { LOCALNET_MIN_PRIORITY_FEE: 'x' }), /LOCALNET_MIN_PRIORITY_FEE/);
});

test('startServer({minPriorityFee}) starts congested', async () => {
  const n2 = await start({ minPriorityFee: 1_000n });
  try {
    assert.deepEqual(await n2.rpc('localnet_getMarket'), { minPriorityFee: 1_000 });
  } finally {
    await n2.close();
  }
});
