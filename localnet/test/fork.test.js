// localnet_abandon: a confirmed transaction dropped as by a fork that lost,
// its effects undone and its signature forgotten.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getMintToInstruction } from '@solana-program/token';
import { start, newWallet, buildTx, transferSol, usdcPaymentInstructions, ata, USDC, kit } from '../testing/helpers.js';

let net;
before(async () => {
  net = await start();
});
after(() => net.close());

const bal = async (a) => (await net.rpc('getBalance', [a])).value;
const usdc = async (owner) => {
  const acc = (await net.rpc('getAccountInfo', [await ata(owner), { encoding: 'jsonParsed' }])).value;
  return acc ? BigInt(acc.data.parsed.info.tokenAmount.amount) : null;
};
const supply = async () => BigInt((await net.rpc('getTokenSupply', [USDC])).value.amount);
const send = async (tx) => assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);

/** Asserts that no history method knows `sig`, at any commitment. */
async function assertForgotten(sig, addresses) {
  assert.equal((await net.rpc('getSignatureStatuses', [[sig], { searchTransactionHistory: true }])).value[0], null);
  for (const commitment of ['confirmed', 'finalized']) {
    assert.equal(await net.rpc('getTransaction', [sig, { commitment, maxSupportedTransactionVersion: 0 }]), null);
    for (const a of addresses) {
      const list = await net.rpc('getSignaturesForAddress', [a, { commitment }]);
      assert.ok(!list.some((s) => s.signature === sig), `${a} still lists ${sig} (${commitment})`);
    }
  }
}

async function refused(params, pattern) {
  const r = await net.call('localnet_abandon', params);
  assert.equal(r.error?.code, -32602, JSON.stringify(r));
  assert.match(r.error.message, pattern);
}

test('a SOL transfer abandoned: balances back, signature forgotten, the slot goes on; it may land again', async () => {
  const payer = await newWallet(net, 3n);
  const dest = await kit.generateKeyPairSigner();
  const before = await bal(payer.address);
  const count = await net.rpc('getTransactionCount');
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  await send(tx);
  const { slot } = await net.rpc('localnet_advance', [{ slots: 2 }]);
  assert.equal((await net.rpc('getSignatureStatuses', [[tx.signature]])).value[0].confirmationStatus, 'confirmed');
  const txSlot = (await net.rpc('getTransaction', [tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }])).slot;

  assert.deepEqual(await net.rpc('localnet_abandon', [{ signature: tx.signature }]), { abandoned: tx.signature, slot: txSlot });
  assert.equal(await bal(payer.address), before);
  assert.equal(await bal(dest.address), 0);
  assert.equal((await net.rpc('getAccountInfo', [dest.address, { encoding: 'base64' }])).value, null);
  assert.equal(await net.rpc('getSlot'), slot);
  assert.equal(await net.rpc('getTransactionCount'), count);
  await assertForgotten(tx.signature, [payer.address, dest.address]);
  await net.rpc('localnet_advance', [{ slots: 40 }]);
  await assertForgotten(tx.signature, [payer.address, dest.address]);
  await refused([tx.signature], /transaction not found/);

  // its blockhash is still valid: the same bytes land again, as after a real fork
  await send(tx);
  assert.equal(await bal(dest.address), 1_000_000_000);
  assert.equal(await bal(payer.address), before - 1_000_000_000 - 5000);
  assert.equal((await net.rpc('getSignatureStatuses', [[tx.signature]])).value[0].err, null);
  assert.deepEqual((await net.rpc('localnet_abandon', [tx.signature])).abandoned, tx.signature); // a bare string too
});

test('USDC transfers abandoned, latest first: amounts back, the created ATA gone, supply unchanged', async () => {
  const sender = await newWallet(net, 1n);
  const recipient = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setTokenAccount', [sender.address, USDC, { amount: 20_000_000 }]);
  const sol = await bal(sender.address);
  const total = await supply();
  const first = await buildTx(net, sender, await usdcPaymentInstructions(sender, recipient, 12_500_000, 'order-1'));
  await send(first); // creates the recipient's ATA, then TransferChecked
  const second = await buildTx(net, sender, await usdcPaymentInstructions(sender, recipient, 500_000, 'order-2'));
  await send(second); // the ATA exists: TransferChecked only
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  assert.equal(await usdc(recipient), 13_000_000n);

  // the first cannot go while the second, which wrote the same accounts, stands
  await refused([{ signature: first.signature }], /written later by/);
  await net.rpc('localnet_abandon', [{ signature: second.signature }]);
  assert.equal(await usdc(recipient), 12_500_000n);
  assert.equal(await usdc(sender.address), 7_500_000n);
  await net.rpc('localnet_abandon', [{ signature: first.signature }]);
  assert.equal(await usdc(sender.address), 20_000_000n);
  assert.equal(await usdc(recipient), null);
  assert.deepEqual((await net.rpc('getTokenAccountsByOwner', [recipient, { mint: USDC }])).value, []);
  assert.equal(await bal(sender.address), sol);
  assert.equal(await supply(), total);
  const recipientAta = await ata(recipient);
  await assertForgotten(first.signature, [sender.address, recipientAta]);
  await assertForgotten(second.signature, [sender.address, recipientAta]);

  // the ATA can be created again
  await send(await buildTx(net, sender, await usdcPaymentInstructions(sender, recipient, 1_000_000, 'order-3')));
  assert.equal(await usdc(recipient), 1_000_000n);
});

test('a MintTo abandoned: the mint supply goes back with the amount', async () => {
  const payer = await newWallet(net, 1n);
  const { secretKey } = await net.rpc('localnet_getMintAuthority');
  const authority = await kit.createKeyPairSignerFromBytes(Uint8Array.from(secretKey));
  await net.rpc('surfnet_setTokenAccount', [payer.address, USDC, { amount: 1 }]);
  const total = await supply();
  const tx = await buildTx(net, payer, [getMintToInstruction({ mint: USDC, token: await ata(payer.address), mintAuthority: authority, amount: 5_000_000n })]);
  await send(tx);
  assert.equal(await supply(), total + 5_000_000n);
  await net.rpc('localnet_abandon', [{ signature: tx.signature }]);
  assert.equal(await supply(), total);
  assert.equal(await usdc(payer.address), 1n);
});

test('refused: unknown or malformed signature, finalized, written later by a transaction or a cheat', async () => {
  const payer = await newWallet(net, 3n);
  const dest = await kit.generateKeyPairSigner();
  await refused([{ signature: kit.getBase58Decoder().decode(new Uint8Array(64).fill(7)) }], /transaction not found/);
  await refused([{ signature: 'not-base58!' }], /Invalid/);
  await refused([{}], /expected a signature string/);

  const old = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000n)]);
  await send(old);
  await net.rpc('localnet_advance', [{ slots: 31 }]);
  assert.equal((await net.rpc('getSignatureStatuses', [[old.signature]])).value[0].confirmationStatus, 'confirmed');
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  assert.equal((await net.rpc('getSignatureStatuses', [[old.signature]])).value[0].confirmationStatus, 'finalized');
  await refused([{ signature: old.signature }], /finalized/);

  const a = await buildTx(net, payer, [transferSol(payer, dest.address, 2_000_000n)]);
  await send(a);
  const other = (await kit.generateKeyPairSigner()).address;
  const b = await buildTx(net, payer, [transferSol(payer, other, 3_000_000n)]); // writes the payer again
  await send(b);
  await refused([{ signature: a.signature }], new RegExp(`account ${payer.address} was written later by ${b.signature}`));
  assert.equal((await net.rpc('getSignatureStatuses', [[a.signature]])).value[0].err, null);

  // a cheat that wrote the destination since: its effects cannot be undone alone
  await net.rpc('surfnet_setAccount', [other, { lamports: 9_000_000 }]);
  await refused([{ signature: b.signature }], /was changed since/);
  assert.equal(await bal(other), 9_000_000);
});

test('an abandoned transaction stays gone after a save and load (snapshot or accounts only)', async () => {
  for (const snapshot of [true, false]) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'localnet-fork-')), 'state.json');
    const first = await start();
    const payer = await newWallet(first, 2n);
    const dest = await kit.generateKeyPairSigner();
    const before = (await first.rpc('getBalance', [payer.address])).value;
    const tx = await buildTx(first, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
    await first.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
    await first.rpc('localnet_abandon', [tx.signature]);
    first.chain.save(file, { snapshot });
    await first.close();

    const second = await start({ statePath: file });
    try {
      assert.equal((await second.rpc('getBalance', [payer.address])).value, before, `snapshot ${snapshot}`);
      assert.equal((await second.rpc('getAccountInfo', [dest.address, { encoding: 'base64' }])).value, null);
      assert.equal((await second.rpc('getSignatureStatuses', [[tx.signature]])).value[0], null);
      assert.equal(await second.rpc('getTransaction', [tx.signature, { commitment: 'confirmed' }]), null);
      assert.deepEqual(
        (await second.rpc('getSignaturesForAddress', [payer.address, { commitment: 'confirmed' }])).map((s) => s.signature).includes(tx.signature),
        false,
      );
    } finally {
      await second.close();
    }
  }
});
