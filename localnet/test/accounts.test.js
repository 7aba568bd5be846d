import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, newWallet, ata, USDC, USDC_DEVNET, kit } from '../testing/helpers.js';

let net;
before(async () => {
  net = await start();
});
after(() => net.close());

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

test('USDC mints exist with 6 decimals', async () => {
  for (const mint of [USDC, USDC_DEVNET]) {
    const r = await net.rpc('getAccountInfo', [mint, { encoding: 'jsonParsed' }]);
    assert.equal(r.value.owner, TOKEN);
    assert.equal(r.value.data.program, 'spl-token');
    assert.equal(r.value.data.parsed.type, 'mint');
    assert.equal(r.value.data.parsed.info.decimals, 6);
    assert.equal(r.value.data.parsed.info.isInitialized, true);
    const auth = await net.rpc('localnet_getMintAuthority');
    assert.equal(r.value.data.parsed.info.mintAuthority, auth.pubkey);
    assert.equal(auth.secretKey.length, 64);
  }
});

test('requestAirdrop credits lamports and is visible in getSignatureStatuses', async () => {
  const w = await kit.generateKeyPairSigner();
  assert.equal((await net.rpc('getBalance', [w.address])).value, 0);
  const sig = await net.rpc('requestAirdrop', [w.address, 2_000_000_000]);
  assert.equal(typeof sig, 'string');
  assert.equal((await net.rpc('getBalance', [w.address])).value, 2_000_000_000);
  const sig2 = await net.rpc('requestAirdrop', [w.address, 2_000_000_000]);
  assert.notEqual(sig2, sig, 'identical airdrops get distinct signatures');
  assert.equal((await net.rpc('getBalance', [w.address])).value, 4_000_000_000);
  const st = await net.rpc('getSignatureStatuses', [[sig]]);
  assert.equal(st.value[0].err, null);
  assert.equal(st.value[0].confirmationStatus, 'processed');
});

test('getAccountInfo: missing account is null; encodings', async () => {
  const missing = (await kit.generateKeyPairSigner()).address;
  assert.equal((await net.rpc('getAccountInfo', [missing, { encoding: 'base64' }])).value, null);
  const w = await newWallet(net, 1n);
  const b64 = await net.rpc('getAccountInfo', [w.address, { encoding: 'base64' }]);
  assert.deepEqual(b64.value, {
    data: ['', 'base64'],
    executable: false,
    lamports: 1_000_000_000,
    owner: '11111111111111111111111111111111',
    rentEpoch: b64.value.rentEpoch,
    space: 0,
  });
  // jsonParsed falls back to base64 for non-parsable accounts
  const jp = await net.rpc('getAccountInfo', [w.address, { encoding: 'jsonParsed' }]);
  assert.deepEqual(jp.value.data, ['', 'base64']);
  // legacy default (binary) refuses > 128 bytes like agave
  const ataAddr = await ata(w.address);
  await net.rpc('surfnet_setTokenAccount', [w.address, USDC, { amount: 1 }]);
  const bin = await net.call('getAccountInfo', [ataAddr]);
  assert.equal(bin.error.code, -32600);
  const sliced = await net.rpc('getAccountInfo', [ataAddr, { encoding: 'base58', dataSlice: { offset: 0, length: 32 } }]);
  assert.deepEqual(sliced.value.data, [USDC, 'base58']);
  const z = await net.rpc('getAccountInfo', [ataAddr, { encoding: 'base64+zstd' }]);
  assert.equal(z.value.data[1], 'base64+zstd');
});

test('surfnet_setAccount: hex data (surfpool), [data, "base64"], partial updates', async () => {
  const a = (await kit.generateKeyPairSigner()).address;
  const owner = (await kit.generateKeyPairSigner()).address;
  const set = await net.rpc('surfnet_setAccount', [a, { lamports: 5000000, data: 'deadbeef', owner }]);
  assert.equal(set.value, null);
  assert.equal(typeof set.context.slot, 'number');
  let r = await net.rpc('getAccountInfo', [a, { encoding: 'base64' }]);
  assert.equal(r.value.lamports, 5000000);
  assert.equal(r.value.owner, owner);
  assert.equal(Buffer.from(r.value.data[0], 'base64').toString('hex'), 'deadbeef');
  // only lamports: data and owner stay
  await net.rpc('surfnet_setAccount', [a, { lamports: 7 }]);
  r = await net.rpc('getAccountInfo', [a, { encoding: 'base64' }]);
  assert.equal(r.value.lamports, 7);
  assert.equal(r.value.owner, owner);
  assert.equal(Buffer.from(r.value.data[0], 'base64').toString('hex'), 'deadbeef');
  await net.rpc('surfnet_setAccount', [a, { data: [Buffer.from('hello').toString('base64'), 'base64'], rentEpoch: '18446744073709551615' }]);
  r = await net.rpc('getAccountInfo', [a, { encoding: 'base64' }]);
  assert.equal(Buffer.from(r.value.data[0], 'base64').toString(), 'hello');
  const raw = await net.raw({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [a, { encoding: 'base64' }] });
  assert.match(raw.text, /"rentEpoch":18446744073709551615/);
  // new account with no lamports given defaults to 0 => does not exist
  const b = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setAccount', [b, { data: '00' }]);
  assert.equal((await net.rpc('getAccountInfo', [b, { encoding: 'base64' }])).value, null);
  const bad = await net.call('surfnet_setAccount', [a, { data: 'xyz' }]);
  assert.equal(bad.error.code, -32602);
});

test('surfnet_setTokenAccount + getTokenAccountBalance + getMultipleAccounts', async () => {
  const w = await newWallet(net, 1n);
  const supplyBefore = BigInt((await net.rpc('getTokenSupply', [USDC])).value.amount);
  const r = await net.rpc('surfnet_setTokenAccount', [w.address, USDC, { amount: 12500000 }]);
  assert.equal(r.value, null);
  const ataAddr = await ata(w.address);
  const bal = await net.rpc('getTokenAccountBalance', [ataAddr]);
  assert.deepEqual(bal.value, { amount: '12500000', decimals: 6, uiAmount: 12.5, uiAmountString: '12.5' });
  const supplyAfter = BigInt((await net.rpc('getTokenSupply', [USDC])).value.amount);
  assert.equal(supplyAfter - supplyBefore, 12500000n);
  // decimal-string amount (u64) replaces the amount
  await net.rpc('surfnet_setTokenAccount', [w.address, USDC, { amount: '3000000' }]);
  assert.equal((await net.rpc('getTokenAccountBalance', [ataAddr])).value.uiAmountString, '3');

  const missing = (await kit.generateKeyPairSigner()).address;
  const multi = await net.rpc('getMultipleAccounts', [[w.address, ataAddr, missing], { encoding: 'base64' }]);
  assert.equal(multi.value.length, 3);
  assert.equal(multi.value[0].lamports, 1_000_000_000);
  assert.equal(multi.value[1].owner, TOKEN);
  assert.equal(multi.value[1].lamports, 2039280);
  assert.equal(multi.value[1].space, 165);
  const data = Buffer.from(multi.value[1].data[0], 'base64');
  assert.equal(data.readBigUInt64LE(64), 3000000n);
  assert.equal(kit.getBase58Decoder().decode(data.subarray(32, 64)), w.address);
  assert.equal(multi.value[2], null);
  const parsed = await net.rpc('getMultipleAccounts', [[ataAddr], { encoding: 'jsonParsed' }]);
  assert.equal(parsed.value[0].data.parsed.info.tokenAmount.amount, '3000000');
  assert.equal(parsed.value[0].data.parsed.info.owner, w.address);

  const byOwner = await net.rpc('getTokenAccountsByOwner', [w.address, { mint: USDC }, { encoding: 'jsonParsed' }]);
  assert.equal(byOwner.value.length, 1);
  assert.equal(byOwner.value[0].pubkey, ataAddr);

  // delegate / state / closeAuthority
  const d = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setTokenAccount', [w.address, USDC, { delegate: d, delegatedAmount: 5, state: 'frozen', closeAuthority: d }]);
  let info = (await net.rpc('getAccountInfo', [ataAddr, { encoding: 'jsonParsed' }])).value.data.parsed.info;
  assert.equal(info.delegate, d);
  assert.equal(info.delegatedAmount.amount, '5');
  assert.equal(info.state, 'frozen');
  assert.equal(info.closeAuthority, d);
  await net.rpc('surfnet_setTokenAccount', [w.address, USDC, { delegate: 'null', state: 'initialized', closeAuthority: 'null' }]);
  info = (await net.rpc('getAccountInfo', [ataAddr, { encoding: 'jsonParsed' }])).value.data.parsed.info;
  assert.equal(info.delegate, undefined);
  assert.equal(info.state, 'initialized');
  assert.equal(info.tokenAmount.amount, '3000000');
});

test('getTokenAccountBalance errors like agave', async () => {
  const w = await newWallet(net, 1n);
  const notToken = await net.call('getTokenAccountBalance', [w.address]);
  assert.deepEqual(notToken.error, { code: -32602, message: 'Invalid param: not a Token account' });
  const missing = await net.call('getTokenAccountBalance', [(await kit.generateKeyPairSigner()).address]);
  assert.deepEqual(missing.error, { code: -32602, message: 'Invalid param: could not find account' });
});
