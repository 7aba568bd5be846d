import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  start,
  newWallet,
  buildTx,
  transferSol,
  usdcPaymentInstructions,
  memoInstruction,
  ata,
  USDC,
  kit,
} from '../testing/helpers.js';

let net;
before(async () => {
  net = await start();
});
after(() => net.close());

const bal = async (a) => (await net.rpc('getBalance', [a])).value;
const status = async (sig) => (await net.rpc('getSignatureStatuses', [[sig]])).value[0];

test('system transfer via sendTransaction (base64 and default base58)', async () => {
  const payer = await newWallet(net, 5n);
  const dest = await kit.generateKeyPairSigner();
  const before = await bal(payer.address);

  const t1 = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  assert.equal(await net.rpc('sendTransaction', [t1.base64, { encoding: 'base64', preflightCommitment: 'confirmed' }]), t1.signature);
  assert.equal(await bal(dest.address), 1_000_000_000);

  const t2 = await buildTx(net, payer, [transferSol(payer, dest.address, 500_000_000n)], { version: 'legacy' });
  assert.equal(await net.rpc('sendTransaction', [t2.base58]), t2.signature);
  assert.equal(await bal(dest.address), 1_500_000_000);
  assert.equal(await bal(payer.address), before - 1_500_000_000 - 2 * 5000);

  // resending an already-processed transaction returns its signature, no double spend
  assert.equal(await net.rpc('sendTransaction', [t1.base64, { encoding: 'base64' }]), t1.signature);
  assert.equal(await net.rpc('sendTransaction', [t1.base64, { encoding: 'base64', skipPreflight: true }]), t1.signature);
  assert.equal(await bal(dest.address), 1_500_000_000);
});

test('USDC TransferChecked between ATAs with CreateIdempotent and Memo', async () => {
  const sender = await newWallet(net, 1n);
  const recipient = await kit.generateKeyPairSigner();
  await net.rpc('surfnet_setTokenAccount', [sender.address, USDC, { amount: 20_000_000 }]);
  const ixs = await usdcPaymentInstructions(sender, recipient.address, 12_500_000, 'order-42');
  const tx = await buildTx(net, sender, ixs);
  const feeForMsg = await net.rpc('getFeeForMessage', [tx.messageBase64, { commitment: 'processed' }]);
  assert.equal(feeForMsg.value, 5000);

  const sig = await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  assert.equal(sig, tx.signature);
  const recipientAta = await ata(recipient.address);
  assert.equal((await net.rpc('getTokenAccountBalance', [recipientAta])).value.uiAmountString, '12.5');
  assert.equal((await net.rpc('getTokenAccountBalance', [await ata(sender.address)])).value.amount, '7500000');

  // running it again with the ATA already present is fine (idempotent) and base58-encoded
  const tx2 = await buildTx(net, sender, await usdcPaymentInstructions(sender, recipient.address, 500_000, 'order-43'));
  assert.equal(await net.rpc('sendTransaction', [tx2.base58, { encoding: 'base58' }]), tx2.signature);
  assert.equal((await net.rpc('getTokenAccountBalance', [recipientAta])).value.amount, '13000000');

  await net.rpc('localnet_advance', [{ slots: 1 }]);
  const got = await net.rpc('getTransaction', [sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
  assert.equal(got.meta.err, null);
  assert.deepEqual(got.meta.status, { Ok: null });
  assert.equal(got.version, 0);
  assert.ok(got.meta.logMessages.includes('Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]'));
  assert.ok(got.meta.logMessages.some((l) => l.includes('order-42')));
  assert.equal(got.meta.fee, 5000);
  const keys = got.transaction.message.accountKeys;
  const post = got.meta.postTokenBalances.find((b) => keys[b.accountIndex] === recipientAta);
  assert.equal(post.uiTokenAmount.amount, '12500000');
  assert.equal(post.owner, recipient.address);
  assert.equal(post.mint, USDC);
  assert.equal(got.meta.preTokenBalances.find((b) => keys[b.accountIndex] === recipientAta), undefined);
  assert.ok(got.meta.innerInstructions.length > 0, 'ATA creation performs CPIs');

  const parsed = await net.rpc('getTransaction', [sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'jsonParsed' }]);
  const types = parsed.transaction.message.instructions.map((i) => i.parsed?.type ?? i.parsed);
  assert.deepEqual(types, ['createIdempotent', 'transferChecked', 'order-42']);

  const sigs = await net.rpc('getSignaturesForAddress', [recipientAta, { commitment: 'confirmed' }]);
  assert.deepEqual(sigs.map((s) => s.signature), [tx2.signature, sig]); // newest first
  assert.equal(sigs[1].memo, '[8] order-42');
  assert.equal(sigs[0].confirmationStatus, 'confirmed');
  const finalizedOnly = await net.rpc('getSignaturesForAddress', [recipientAta]);
  assert.deepEqual(finalizedOnly, []);
});

test('preflight failure (insufficient funds) answers -32002 and records nothing', async () => {
  const payer = await newWallet(net, 1n);
  const dest = await kit.generateKeyPairSigner();
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 5_000_000_000n)]);
  const before = await bal(payer.address);
  const r = await net.call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  assert.equal(r.error.code, -32002);
  assert.equal(r.error.message, 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
  assert.deepEqual(r.error.data.err, { InstructionError: [0, { Custom: 1 }] });
  assert.ok(r.error.data.logs.some((l) => l.includes('insufficient lamports')));
  assert.equal(r.error.data.accounts, null);
  assert.equal(r.error.data.returnData, null);
  assert.equal(typeof r.error.data.unitsConsumed, 'number');
  assert.equal(await bal(payer.address), before, 'no fee charged');
  assert.equal(await status(tx.signature), null);
});

test('skipPreflight failure is recorded as failed with err and fee charged', async () => {
  const payer = await newWallet(net, 1n);
  const dest = await kit.generateKeyPairSigner();
  // instruction 2 fails: transfer more than the balance
  const tx = await buildTx(net, payer, [
    memoInstruction('a'),
    transferSol(payer, dest.address, 1_000_000n),
    transferSol(payer, dest.address, 5_000_000_000n),
  ]);
  const before = await bal(payer.address);
  const sig = await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64', skipPreflight: true }]);
  assert.equal(sig, tx.signature);
  const st = await status(sig);
  assert.deepEqual(st.err, { InstructionError: [2, { Custom: 1 }] });
  assert.deepEqual(st.status, { Err: { InstructionError: [2, { Custom: 1 }] } });
  assert.equal(st.confirmationStatus, 'processed');
  assert.equal(await bal(payer.address), before - 5000);
  assert.equal(await bal(dest.address), 0, 'state changes rolled back');

  await net.rpc('localnet_advance', [{ slots: 32 }]);
  const got = await net.rpc('getTransaction', [sig, { encoding: 'json', maxSupportedTransactionVersion: 0 }]);
  assert.deepEqual(got.meta.err, { InstructionError: [2, { Custom: 1 }] });
  assert.equal(got.meta.fee, 5000);
  assert.equal(got.meta.preBalances[0] - got.meta.postBalances[0], 5000);
  assert.ok(got.meta.logMessages.length > 0);
  assert.equal(typeof got.blockTime, 'number');
  assert.equal(got.slot, st.slot);
});

test('statuses go processed -> confirmed -> finalized', async () => {
  const payer = await newWallet(net, 1n);
  const tx = await buildTx(net, payer, [memoInstruction('status', [payer])]);
  const sig = await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  let st = await status(sig);
  assert.equal(st.confirmationStatus, 'processed');
  assert.equal(st.confirmations, 0);
  const slot = st.slot;
  // not visible to getTransaction before confirmation
  assert.equal(await net.rpc('getTransaction', [sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]), null);
  const processed = await net.call('getTransaction', [sig, { commitment: 'processed' }]);
  assert.equal(processed.error.code, -32602);

  await net.rpc('localnet_advance', [{ slots: 1 }]);
  st = await status(sig);
  assert.equal(st.confirmationStatus, 'confirmed');
  assert.equal(st.confirmations, 1);
  assert.equal(st.slot, slot);
  assert.equal(await net.rpc('getTransaction', [sig, { maxSupportedTransactionVersion: 0 }]), null, 'default commitment is finalized');

  await net.rpc('localnet_advance', [{ slots: 30 }]);
  assert.equal((await status(sig)).confirmationStatus, 'confirmed');
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  st = await status(sig);
  assert.equal(st.confirmationStatus, 'finalized');
  assert.equal(st.confirmations, null);

  const b64 = await net.rpc('getTransaction', [sig, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
  assert.deepEqual(b64.transaction, [tx.base64, 'base64']);
  assert.equal(b64.slot, slot);
  // v0 without maxSupportedTransactionVersion is refused like agave
  const v = await net.call('getTransaction', [sig, { encoding: 'json' }]);
  assert.equal(v.error.code, -32015);
  const unknown = await net.rpc('getTransaction', ['1'.repeat(64), { maxSupportedTransactionVersion: 0 }]);
  assert.equal(unknown, null);
  const mixed = await net.rpc('getSignatureStatuses', [[sig, '1'.repeat(64)], { searchTransactionHistory: true }]);
  assert.equal(mixed.value[1], null);
});

test('simulateTransaction shapes', async () => {
  const payer = await newWallet(net, 1n);
  const dest = await kit.generateKeyPairSigner();
  const ok = await buildTx(net, payer, [transferSol(payer, dest.address, 100_000_000n)]);
  const r = await net.rpc('simulateTransaction', [ok.base64, { encoding: 'base64', sigVerify: true, commitment: 'processed', accounts: { addresses: [dest.address], encoding: 'base64' } }]);
  assert.equal(r.value.err, null);
  assert.ok(r.value.logs.length > 0);
  assert.equal(typeof r.value.unitsConsumed, 'number');
  assert.equal(r.value.returnData, null);
  assert.equal(r.value.accounts[0].lamports, 100_000_000);
  assert.equal(await bal(dest.address), 0, 'simulation changes nothing');
  const bad = await buildTx(net, payer, [transferSol(payer, dest.address, 50_000_000_000n)]);
  const f = await net.rpc('simulateTransaction', [bad.base58]);
  assert.deepEqual(f.value.err, { InstructionError: [0, { Custom: 1 }] });
  assert.equal(f.value.accounts, null);
});

test('bad signatures are rejected (-32003) or dropped (skipPreflight)', async () => {
  const payer = await newWallet(net, 1n);
  const dest = await kit.generateKeyPairSigner();
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 100_000_000n)]);
  const bytes = Buffer.from(tx.base64, 'base64');
  bytes[10] ^= 0xff; // corrupt the signature
  const r = await net.call('sendTransaction', [bytes.toString('base64'), { encoding: 'base64' }]);
  assert.equal(r.error.code, -32003);
  const sig = await net.rpc('sendTransaction', [bytes.toString('base64'), { encoding: 'base64', skipPreflight: true }]);
  assert.equal(typeof sig, 'string');
  assert.equal(await status(sig), null);
  assert.equal(await bal(dest.address), 0);
  const garbage = await net.call('sendTransaction', ['AAAA', { encoding: 'base64' }]);
  assert.equal(garbage.error.code, -32602);
});
