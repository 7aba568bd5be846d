// The RPC conversation of an x402 `exact` payment on Solana, as the official
// packages (@x402/svm's client and facilitator on @solana/kit) hold it: a v0
// transaction whose fee payer is the seller's facilitator, partially signed
// by the buyer, simulated without signature checks, completed by the fee
// payer and sent with skipPreflight. examples/x402-seller runs the packages
// themselves against the localnet; this pins the behaviour they rely on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTransferCheckedInstruction, findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { start, newWallet, kit, USDC_DEVNET, MEMO_PROGRAM } from '../testing/helpers.js';

const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const ALT_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
const PRICE = 10_000n;

let net;
before(async () => {
  net = await start();
});
after(() => net.close());

const ataOf = async (owner) => (await findAssociatedTokenPda({ owner, mint: USDC_DEVNET, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
const usdc = async (owner) => {
  const acc = (await net.rpc('getAccountInfo', [await ataOf(owner), { encoding: 'jsonParsed', commitment: 'confirmed' }])).value;
  return acc ? BigInt(acc.data.parsed.info.tokenAmount.amount) : null;
};
const status = async (sig) => (await net.rpc('getSignatureStatuses', [[sig]])).value[0];

function computeLimit(units) {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: COMPUTE_BUDGET, accounts: [], data };
}
function computePrice(microLamports) {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, BigInt(microLamports), true);
  return { programAddress: COMPUTE_BUDGET, accounts: [], data };
}

/** A fee payer with SOL, a buyer with USDC and no SOL, and a payTo (with its token account unless told). */
async function parties({ payToAccount = true } = {}) {
  const feePayer = await newWallet(net, 1n);
  const buyer = await kit.generateKeyPairSigner();
  const payTo = await kit.generateKeyPairSigner();
  await net.rpc('surfnet_setTokenAccount', [buyer.address, USDC_DEVNET, { amount: 1_000_000 }]);
  if (payToAccount) await net.rpc('surfnet_setTokenAccount', [payTo.address, USDC_DEVNET, {}]);
  return { feePayer, buyer, payTo: payTo.address };
}

/** The exact scheme's transaction ("path 1"), signed by the buyer only; base64 wire bytes. */
async function exactPayment({ feePayer, buyer, payTo }, { lookupTables } = {}) {
  const { value: bh } = await net.rpc('getLatestBlockhash', [{ commitment: 'confirmed' }]);
  const transfer = getTransferCheckedInstruction({
    source: await ataOf(buyer.address),
    mint: USDC_DEVNET,
    destination: await ataOf(payTo),
    authority: buyer,
    amount: PRICE,
    decimals: 6,
  });
  const memo = { programAddress: MEMO_PROGRAM, accounts: [], data: new TextEncoder().encode('0123456789abcdef0123456789abcdef') };
  let msg = kit.pipe(
    kit.createTransactionMessage({ version: 0 }),
    (m) => kit.setTransactionMessageFeePayer(feePayer.address, m),
    (m) => kit.setTransactionMessageLifetimeUsingBlockhash({ blockhash: bh.blockhash, lastValidBlockHeight: BigInt(bh.lastValidBlockHeight) }, m),
    (m) => kit.appendTransactionMessageInstructions([computeLimit(20_000), computePrice(1), transfer, memo], m),
  );
  if (lookupTables) msg = kit.compressTransactionMessageUsingAddressLookupTables(msg, lookupTables);
  return kit.partiallySignTransactionMessageWithSigners(msg);
}
const wire = (tx) => kit.getBase64EncodedWireTransaction(tx);

test('x402 exact: buyer signs partially, simulation skips signatures, the fee payer completes and pays the fee', async () => {
  const p = await parties();
  const tx = await exactPayment(p);
  assert.equal(tx.signatures[p.feePayer.address], null);

  // the facilitator's verify: simulateTransaction without signature checks
  const sim = await net.rpc('simulateTransaction', [wire(tx), { sigVerify: false, replaceRecentBlockhash: false, commitment: 'confirmed', encoding: 'base64' }]);
  assert.equal(sim.value.err, null);
  assert.ok(sim.value.logs.includes('Program log: Memo (len 32)'));
  // with signature checks, the missing fee-payer signature fails like agave
  const sv = await net.call('simulateTransaction', [wire(tx), { sigVerify: true, encoding: 'base64' }]);
  assert.equal(sv.error.code, -32003);
  // sent as the buyer signed it, it never lands
  const unsigned = await net.rpc('sendTransaction', [wire(tx), { encoding: 'base64', skipPreflight: true }]);
  assert.equal(await status(unsigned), null);
  assert.equal(await usdc(p.payTo), 0n);

  // the facilitator's settle: add the fee payer's signature, send, poll the status
  const signed = await kit.partiallySignTransaction([p.feePayer.keyPair], tx);
  const sig = await net.rpc('sendTransaction', [wire(signed), { encoding: 'base64', skipPreflight: true, preflightCommitment: 'confirmed' }]);
  assert.equal(sig, kit.getSignatureFromTransaction(signed), 'the id is the fee payer’s signature');
  assert.notEqual(sig, unsigned);
  await net.rpc('localnet_advance', [{ slots: 1 }]);
  const st = await status(sig);
  assert.equal(st.confirmationStatus, 'confirmed');
  assert.equal(st.err, null);
  assert.equal(await usdc(p.payTo), PRICE);
  assert.equal(await usdc(p.buyer.address), 1_000_000n - PRICE);
  assert.equal((await net.rpc('getBalance', [p.buyer.address])).value, 0);
  assert.equal((await net.rpc('getBalance', [p.feePayer.address])).value, 1_000_000_000 - 10_000 - 1); // 2 signatures + ceil(1 × 20000 / 1e6)
});

test('x402 exact: a payTo without its token account fails in simulation (the scheme never creates it)', async () => {
  const p = await parties({ payToAccount: false });
  const tx = await exactPayment(p);
  const sim = await net.rpc('simulateTransaction', [wire(tx), { sigVerify: false, encoding: 'base64' }]);
  assert.deepEqual(sim.value.err, { InstructionError: [2, 'InvalidAccountData'] });
});

/** Lookup table account data: meta (56 bytes) then the addresses. */
function lookupTableData(addresses, { authority = null, discriminator = 1 } = {}) {
  const data = new Uint8Array(56 + 32 * addresses.length);
  const dv = new DataView(data.buffer);
  dv.setUint32(0, discriminator, true);
  dv.setBigUint64(4, (1n << 64n) - 1n, true); // not deactivated
  dv.setBigUint64(12, 7n, true);
  data[20] = addresses.length; // all of them usable now, whatever the slot
  if (authority) {
    data[21] = 1;
    data.set(kit.getAddressEncoder().encode(authority), 22);
  }
  addresses.forEach((a, i) => data.set(kit.getAddressEncoder().encode(a), 56 + 32 * i));
  return data;
}

test('address lookup tables read as jsonParsed (kit resolves them), and a v0 payment through one lands', async () => {
  const p = await parties();
  const table = (await kit.generateKeyPairSigner()).address;
  const payToAta = await ataOf(p.payTo);
  const data = lookupTableData([payToAta, USDC_DEVNET], { authority: p.feePayer.address });
  await net.rpc('surfnet_setAccount', [table, { lamports: 10_000_000, owner: ALT_PROGRAM, data: [Buffer.from(data).toString('base64'), 'base64'] }]);

  const acc = (await net.rpc('getAccountInfo', [table, { encoding: 'jsonParsed' }])).value;
  assert.deepEqual(acc.data, {
    program: 'address-lookup-table',
    parsed: {
      type: 'lookupTable',
      info: {
        deactivationSlot: '18446744073709551615',
        lastExtendedSlot: '7',
        lastExtendedSlotStartIndex: 2,
        authority: p.feePayer.address,
        addresses: [payToAta, USDC_DEVNET],
      },
    },
    space: data.length,
  });
  const rpc = kit.createSolanaRpc(net.url);
  const resolved = await kit.fetchAddressesForLookupTables([table], rpc);
  assert.deepEqual(resolved, { [table]: [payToAta, USDC_DEVNET] });

  const tx = await exactPayment(p, { lookupTables: resolved });
  const compiled = kit.getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  assert.equal(compiled.addressTableLookups.length, 1);
  const signed = await kit.partiallySignTransaction([p.feePayer.keyPair], tx);
  const sim = await net.rpc('simulateTransaction', [wire(tx), { sigVerify: false, encoding: 'base64' }]);
  assert.equal(sim.value.err, null);
  const sig = await net.rpc('sendTransaction', [wire(signed), { encoding: 'base64', skipPreflight: true }]);
  assert.equal((await status(sig)).err, null);
  assert.equal(await usdc(p.payTo), PRICE);

  // no authority (frozen table), an uninitialized table, and bytes that do not parse (base64, as agave)
  await net.rpc('surfnet_setAccount', [table, { data: [Buffer.from(lookupTableData([payToAta])).toString('base64'), 'base64'] }]);
  const frozen = (await net.rpc('getMultipleAccounts', [[table], { encoding: 'jsonParsed' }])).value[0];
  assert.equal(frozen.data.parsed.info.authority, undefined);
  assert.deepEqual(frozen.data.parsed.info.addresses, [payToAta]);
  await net.rpc('surfnet_setAccount', [table, { data: [Buffer.from(lookupTableData([], { discriminator: 0 })).toString('base64'), 'base64'] }]);
  assert.deepEqual((await net.rpc('getAccountInfo', [table, { encoding: 'jsonParsed' }])).value.data.parsed, { type: 'uninitialized' });
  await net.rpc('surfnet_setAccount', [table, { data: [Buffer.from(data.subarray(0, 60)).toString('base64'), 'base64'] }]);
  const bad = (await net.rpc('getAccountInfo', [table, { encoding: 'jsonParsed' }])).value;
  assert.deepEqual(bad.data, [Buffer.from(data.subarray(0, 60)).toString('base64'), 'base64']);
});
