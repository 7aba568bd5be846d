// The stablecoin mints of both networks: USDC, USDT, EURC (SPL Token) and
// PYUSD, USDG (Token-2022 with extensions), checked against the real
// programs in LiteSVM.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  getFreezeAccountInstruction,
  getMintToInstruction,
  getTransferCheckedInstruction,
  getTransferInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
} from '@solana-program/token';
import {
  start,
  newWallet,
  buildTx,
  ata,
  tokenPaymentInstructions,
  kit,
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
} from '../testing/helpers.js';

// Written out here, not read from lib/mints.js, so a wrong address or
// program there fails this test.
const EXPECTED = {
  mainnet: {
    USDC: ['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', TOKEN_PROGRAM],
    USDT: ['Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', TOKEN_PROGRAM],
    EURC: ['HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr', TOKEN_PROGRAM],
    PYUSD: ['2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo', TOKEN_2022_PROGRAM],
    USDG: ['2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH', TOKEN_2022_PROGRAM],
  },
  devnet: {
    USDC: ['4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', TOKEN_PROGRAM],
    EURC: ['HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr', TOKEN_PROGRAM],
    PYUSD: ['CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM', TOKEN_2022_PROGRAM],
    USDG: ['4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7', TOKEN_2022_PROGRAM],
  },
};
const PYUSD = EXPECTED.mainnet.PYUSD[0];
const PYUSD_DEVNET = EXPECTED.devnet.PYUSD[0];
const USDG = EXPECTED.mainnet.USDG[0];
const USDT = EXPECTED.mainnet.USDT[0];
const EURC = EXPECTED.mainnet.EURC[0];
const ALL = [...new Map(Object.values(EXPECTED).flatMap((n) => Object.entries(n).map(([sym, [mint, program]]) => [mint, { sym, mint, program }]))).values()];

// spl-token-2022 ExtensionType numbers and their value lengths, in the order
// mainnet PYUSD carries them (an 866-byte mint).
const PAXOS_TLV = [
  [3, 32, 'mintCloseAuthority'],
  [12, 32, 'permanentDelegate'],
  [1, 108, 'transferFeeConfig'],
  [4, 65, 'confidentialTransferMint'],
  [16, 129, 'confidentialTransferFeeConfig'],
  [14, 64, 'transferHook'],
  [18, 64, 'metadataPointer'],
  [19, null, 'tokenMetadata'],
];

const b58 = kit.getBase58Decoder();
const key = (d, o) => b58.decode(d.subarray(o, o + 32));
const isZero = (d) => d.every((b) => b === 0);

/** Decodes a Token-2022 TLV area by hand (independent of lib/token.js). */
function tlv(data) {
  const out = [];
  let o = 166;
  while (o + 4 <= data.length) {
    const type = data.readUInt16LE(o);
    const len = data.readUInt16LE(o + 2);
    if (type === 0) break;
    out.push({ type, len, value: data.subarray(o + 4, o + 4 + len) });
    o += 4 + len;
  }
  assert.equal(o, data.length, 'the TLV entries fill the account exactly');
  return out;
}

async function raw(net, address) {
  const r = await net.rpc('getAccountInfo', [address, { encoding: 'base64' }]);
  return r.value && { ...r.value, bytes: Buffer.from(r.value.data[0], 'base64') };
}

async function send(net, payer, ixs) {
  const tx = await buildTx(net, payer, ixs);
  const r = await net.call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  return { ...tx, response: r };
}

let net;
let auth;
let authSigner;
before(async () => {
  net = await start();
  auth = await net.rpc('localnet_getMintAuthority');
  authSigner = await kit.createKeyPairSignerFromBytes(Uint8Array.from(auth.secretKey));
});
after(() => net.close());

test('every stablecoin mint exists at its real address with its program and 6 decimals; localnet_getMintAuthority lists them per network', async () => {
  assert.deepEqual(auth.mints.slice(0, 2), [EXPECTED.mainnet.USDC[0], EXPECTED.devnet.USDC[0]], 'USDC stays first');
  assert.deepEqual(new Set(auth.mints), new Set(ALL.map((m) => m.mint)));
  for (const network of ['mainnet', 'devnet']) {
    const listed = auth.networks[network];
    assert.deepEqual(
      listed.map((c) => [c.symbol, c.mint, c.program, c.decimals]),
      Object.entries(EXPECTED[network]).map(([sym, [mint, program]]) => [sym, mint, program, 6]),
      `${network} listing`,
    );
    for (const [sym, [mint, program]] of Object.entries(EXPECTED[network])) {
      const r = await net.rpc('getAccountInfo', [mint, { encoding: 'jsonParsed' }]);
      assert.equal(r.value.owner, program, `${network} ${sym} owner`);
      assert.equal(r.value.data.program, program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022');
      assert.equal(r.value.data.parsed.type, 'mint');
      const info = r.value.data.parsed.info;
      assert.equal(info.decimals, 6, `${network} ${sym} decimals`);
      assert.equal(info.mintAuthority, auth.pubkey, `${network} ${sym} mint authority`);
      assert.equal(info.isInitialized, true);
      assert.equal(r.value.lamports, await net.rpc('getMinimumBalanceForRentExemption', [r.value.space]), 'rent-exempt');
      const supply = await net.rpc('getTokenSupply', [mint]);
      assert.equal(supply.value.decimals, 6);
    }
  }
  assert.equal(auth.networks.devnet.find((c) => c.symbol === 'USDT'), undefined, 'USDT has no devnet mint');
  for (const c of [...auth.networks.mainnet, ...auth.networks.devnet]) {
    if (c.program === TOKEN_2022_PROGRAM) assert.deepEqual(c.extensions, PAXOS_TLV.map((e) => e[2]));
  }
});

test('PYUSD and USDG are Token-2022 mints laid out like mainnet PYUSD: the extension bytes decode', async () => {
  for (const [mint, name, symbol] of [
    [PYUSD, 'PayPal USD', 'PYUSD'],
    [PYUSD_DEVNET, 'PayPal USD', 'PYUSD'],
    [USDG, 'Global Dollar', 'USDG'],
  ]) {
    const acc = await raw(net, mint);
    const d = acc.bytes;
    assert.equal(acc.owner, TOKEN_2022_PROGRAM);
    // base mint: mint authority, decimals, initialized, freeze authority
    assert.equal(d.readUInt32LE(0), 1);
    assert.equal(key(d, 4), auth.pubkey);
    assert.equal(d[44], 6);
    assert.equal(d[45], 1);
    assert.equal(d.readUInt32LE(46), 1, 'a freeze authority is set');
    assert.equal(key(d, 50), auth.pubkey);
    assert.ok(isZero(d.subarray(82, 165)), 'padding to the account length');
    assert.equal(d[165], 1, 'account type: mint');
    const entries = tlv(d);
    assert.deepEqual(
      entries.map((e) => e.type),
      PAXOS_TLV.map((e) => e[0]),
    );
    entries.forEach((e, i) => {
      if (PAXOS_TLV[i][1] !== null) assert.equal(e.len, PAXOS_TLV[i][1], `length of extension ${e.type}`);
    });
    const byType = Object.fromEntries(entries.map((e) => [e.type, e.value]));
    assert.equal(key(byType[3], 0), auth.pubkey, 'mint close authority');
    assert.equal(key(byType[12], 0), auth.pubkey, 'permanent delegate');
    const fee = byType[1];
    assert.equal(key(fee, 0), auth.pubkey, 'transfer fee config authority');
    assert.equal(fee.readBigUInt64LE(64), 0n, 'withheld');
    for (const o of [72, 90]) {
      assert.equal(fee.readBigUInt64LE(o + 8), 0n, 'maximum fee');
      assert.equal(fee.readUInt16LE(o + 16), 0, 'basis points');
    }
    assert.equal(key(byType[4], 0), auth.pubkey, 'confidential transfer authority');
    assert.equal(byType[4][32], 0, 'no auto-approve');
    assert.equal(key(byType[14], 0), auth.pubkey, 'transfer hook authority');
    assert.ok(isZero(byType[14].subarray(32, 64)), 'transfer hook program id is unset');
    assert.equal(key(byType[18], 32), mint, 'metadata pointer to the mint itself');
    const md = byType[19];
    assert.equal(key(md, 32), mint);
    const nameLen = md.readUInt32LE(64);
    assert.equal(md.subarray(68, 68 + nameLen).toString(), name);
    const symLen = md.readUInt32LE(68 + nameLen);
    assert.equal(md.subarray(72 + nameLen, 72 + nameLen + symLen).toString(), symbol);
    if (mint === PYUSD) assert.equal(d.length, 866, 'the same size as the mainnet PYUSD mint');

    // jsonParsed reports the extensions as agave does
    const parsed = (await net.rpc('getAccountInfo', [mint, { encoding: 'jsonParsed' }])).value.data.parsed.info;
    assert.deepEqual(
      parsed.extensions.map((e) => e.extension),
      PAXOS_TLV.map((e) => e[2]),
    );
    const ex = Object.fromEntries(parsed.extensions.map((e) => [e.extension, e.state]));
    assert.equal(ex.transferHook.programId, null);
    assert.equal(ex.transferFeeConfig.newerTransferFee.transferFeeBasisPoints, 0);
    assert.equal(ex.permanentDelegate.delegate, auth.pubkey);
    assert.equal(ex.mintCloseAuthority.closeAuthority, auth.pubkey);
    assert.equal(ex.metadataPointer.metadataAddress, mint);
    assert.deepEqual([ex.tokenMetadata.name, ex.tokenMetadata.symbol], [name, symbol]);
    assert.equal(parsed.freezeAuthority, auth.pubkey);
  }
});

test('surfnet_setTokenAccount funds every mint: the ATA of the mint\'s own program, reported by every token method', async () => {
  for (const { sym, mint, program } of ALL) {
    const owner = (await kit.generateKeyPairSigner()).address;
    const supplyBefore = BigInt((await net.rpc('getTokenSupply', [mint])).value.amount);
    // no token program given: it is the mint's
    await net.rpc('surfnet_setTokenAccount', [owner, mint, { amount: 12_500_000 }]);
    const address = await ata(owner, mint, program);
    const acc = await raw(net, address);
    assert.equal(acc.owner, program, `${sym} account owner`);
    assert.equal(acc.lamports, await net.rpc('getMinimumBalanceForRentExemption', [acc.bytes.length]));
    if (program === TOKEN_PROGRAM) assert.equal(acc.bytes.length, 165);
    else {
      // ImmutableOwner, TransferFeeAmount, TransferHookAccount: what the ATA program creates (checked below)
      assert.equal(acc.bytes.length, 187);
      assert.equal(acc.bytes[165], 2, 'account type: account');
      assert.deepEqual(
        tlv(acc.bytes).map((e) => [e.type, e.len]),
        [
          [7, 0],
          [2, 8],
          [15, 1],
        ],
      );
    }
    const bal = await net.rpc('getTokenAccountBalance', [address]);
    assert.deepEqual(bal.value, { amount: '12500000', decimals: 6, uiAmount: 12.5, uiAmountString: '12.5' });
    assert.equal(BigInt((await net.rpc('getTokenSupply', [mint])).value.amount), supplyBefore + 12_500_000n);

    for (const filter of [{ mint }, { programId: program }]) {
      const list = (await net.rpc('getTokenAccountsByOwner', [owner, filter, { encoding: 'jsonParsed' }])).value;
      assert.equal(list.length, 1, `${sym} by ${Object.keys(filter)[0]}`);
      assert.equal(list[0].pubkey, address);
      assert.equal(list[0].account.owner, program);
      const { program: name, parsed } = list[0].account.data;
      assert.equal(name, program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022');
      assert.equal(parsed.type, 'account');
      assert.equal(parsed.info.mint, mint);
      assert.equal(parsed.info.owner, owner);
      assert.equal(parsed.info.state, 'initialized');
      assert.equal(parsed.info.tokenAmount.amount, '12500000');
      assert.equal(parsed.info.tokenAmount.decimals, 6);
      if (program === TOKEN_2022_PROGRAM) {
        assert.deepEqual(parsed.info.extensions, [
          { extension: 'immutableOwner' },
          { extension: 'transferFeeAmount', state: { withheldAmount: 0 } },
          { extension: 'transferHookAccount', state: { transferring: false } },
        ]);
      } else assert.equal(parsed.info.extensions, undefined);
    }
    const other = program === TOKEN_PROGRAM ? TOKEN_2022_PROGRAM : TOKEN_PROGRAM;
    assert.equal((await net.rpc('getTokenAccountsByOwner', [owner, { programId: other }])).value.length, 0);

    // patching keeps the layout; an explicit token program that is not the mint's is refused
    await net.rpc('surfnet_setTokenAccount', [owner, mint, { amount: '1' }, program]);
    assert.equal((await net.rpc('getTokenAccountBalance', [address])).value.amount, '1');
    assert.equal((await raw(net, address)).bytes.length, program === TOKEN_PROGRAM ? 165 : 187);
    const wrong = await net.call('surfnet_setTokenAccount', [owner, mint, { amount: 1 }, other]);
    assert.equal(wrong.error.code, -32602);
    assert.match(wrong.error.message, /is owned by/);
  }
});

test('PYUSD: a TransferChecked between two wallets lands via Token-2022, the ATA program makes the account the cheat makes, and the meta shows the token balances', async () => {
  const sender = await newWallet(net);
  const recipient = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setTokenAccount', [sender.address, PYUSD, { amount: 10_000_000 }]);
  const source = await ata(sender.address, PYUSD, TOKEN_2022_PROGRAM);
  const destination = await ata(recipient, PYUSD, TOKEN_2022_PROGRAM);
  const ixs = await tokenPaymentInstructions(sender, recipient, 2_500_000, 'pyusd payment', { mint: PYUSD, tokenProgram: TOKEN_2022_PROGRAM });
  const tx = await send(net, sender, ixs);
  assert.equal(tx.response.result, tx.signature, JSON.stringify(tx.response.error));
  await net.rpc('localnet_advance', [{ slots: 1 }]);

  // the account the ATA program made has the bytes of a cheat-made one
  const made = await raw(net, destination);
  const cheatOwner = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setTokenAccount', [cheatOwner, PYUSD, { amount: 2_500_000 }]);
  const cheat = await raw(net, await ata(cheatOwner, PYUSD, TOKEN_2022_PROGRAM));
  assert.equal(made.owner, TOKEN_2022_PROGRAM);
  assert.equal(made.bytes.length, cheat.bytes.length);
  assert.equal(made.lamports, cheat.lamports);
  assert.deepEqual(made.bytes.subarray(64), cheat.bytes.subarray(64), 'same amount, state and extensions');
  assert.deepEqual(made.bytes.subarray(0, 32), cheat.bytes.subarray(0, 32), 'same mint');

  for (const encoding of ['json', 'jsonParsed']) {
    const got = await net.rpc('getTransaction', [tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding }]);
    assert.equal(got.meta.err, null);
    const keys = encoding === 'json' ? got.transaction.message.accountKeys : got.transaction.message.accountKeys.map((k) => k.pubkey);
    const bal = (list, address) => list.find((b) => keys[b.accountIndex] === address);
    const preSrc = bal(got.meta.preTokenBalances, source);
    assert.deepEqual(
      { mint: preSrc.mint, owner: preSrc.owner, programId: preSrc.programId, amount: preSrc.uiTokenAmount.amount, decimals: preSrc.uiTokenAmount.decimals },
      { mint: PYUSD, owner: sender.address, programId: TOKEN_2022_PROGRAM, amount: '10000000', decimals: 6 },
    );
    assert.equal(bal(got.meta.preTokenBalances, destination), undefined, 'the recipient account did not exist before');
    assert.equal(bal(got.meta.postTokenBalances, source).uiTokenAmount.amount, '7500000');
    const postDst = bal(got.meta.postTokenBalances, destination);
    assert.deepEqual(
      { mint: postDst.mint, owner: postDst.owner, programId: postDst.programId, ui: postDst.uiTokenAmount.uiAmountString },
      { mint: PYUSD, owner: recipient, programId: TOKEN_2022_PROGRAM, ui: '2.5' },
    );
    assert.ok(got.meta.logMessages.includes('Program log: Instruction: TransferChecked'), 'Token-2022 ran it');
    if (encoding === 'jsonParsed') {
      const ix = got.transaction.message.instructions.find((i) => i.parsed?.type === 'transferChecked');
      assert.equal(ix.program, 'spl-token-2022');
      assert.equal(ix.programId, TOKEN_2022_PROGRAM);
      assert.deepEqual(
        { source: ix.parsed.info.source, destination: ix.parsed.info.destination, mint: ix.parsed.info.mint, amount: ix.parsed.info.tokenAmount.amount },
        { source, destination, mint: PYUSD, amount: '2500000' },
      );
    }
  }
  assert.equal((await net.rpc('getTokenAccountBalance', [destination])).value.uiAmountString, '2.5');
});

test('PYUSD: a plain Transfer is refused (the mint has transfer-fee and transfer-hook extensions), while mint authority, permanent delegate and freeze authority work', async () => {
  const a = await newWallet(net);
  const b = (await kit.generateKeyPairSigner()).address;
  const src = await ata(a.address, PYUSD, TOKEN_2022_PROGRAM);
  const dst = await ata(b, PYUSD, TOKEN_2022_PROGRAM);
  await net.rpc('surfnet_setTokenAccount', [b, PYUSD, { amount: 0 }]);
  // MintTo by the localnet's mint authority into an account the ATA program creates
  const minted = await send(net, a, [
    getCreateAssociatedTokenIdempotentInstruction({ payer: a, ata: src, owner: a.address, mint: PYUSD, tokenProgram: TOKEN_2022_PROGRAM }),
    getMintToInstruction({ mint: PYUSD, token: src, mintAuthority: authSigner, amount: 3_000_000n }, { programAddress: TOKEN_2022_PROGRAM }),
  ]);
  assert.equal(minted.response.result, minted.signature, JSON.stringify(minted.response.error));
  assert.equal((await net.rpc('getTokenAccountBalance', [src])).value.amount, '3000000');

  const plain = await send(net, a, [getTransferInstruction({ source: src, destination: dst, authority: a, amount: 1n }, { programAddress: TOKEN_2022_PROGRAM })]);
  assert.equal(plain.response.error.code, -32002);
  assert.deepEqual(plain.response.error.data.err, { InstructionError: [0, { Custom: 31 }] }, 'TokenError::MintRequiredForTransfer');
  assert.ok(plain.response.error.data.logs.some((l) => /Mint required for this account to transfer tokens/.test(l)));

  // the permanent delegate moves tokens without the holder signing
  const seized = await send(net, a, [
    getTransferCheckedInstruction(
      { source: src, mint: PYUSD, destination: dst, authority: authSigner, amount: 1_000_000n, decimals: 6 },
      { programAddress: TOKEN_2022_PROGRAM },
    ),
  ]);
  assert.equal(seized.response.result, seized.signature, JSON.stringify(seized.response.error));
  assert.equal((await net.rpc('getTokenAccountBalance', [dst])).value.amount, '1000000');

  // the freeze authority freezes; a frozen account cannot send
  const frozen = await send(net, a, [getFreezeAccountInstruction({ account: src, mint: PYUSD, owner: authSigner }, { programAddress: TOKEN_2022_PROGRAM })]);
  assert.equal(frozen.response.result, frozen.signature, JSON.stringify(frozen.response.error));
  const parsed = (await net.rpc('getAccountInfo', [src, { encoding: 'jsonParsed' }])).value.data.parsed.info;
  assert.equal(parsed.state, 'frozen');
  const blocked = await send(net, a, [
    getTransferCheckedInstruction({ source: src, mint: PYUSD, destination: dst, authority: a, amount: 1n, decimals: 6 }, { programAddress: TOKEN_2022_PROGRAM }),
  ]);
  assert.equal(blocked.response.error.code, -32002);
});

test('USDT and EURC: TransferChecked between two wallets lands via SPL Token', async () => {
  for (const mint of [USDT, EURC]) {
    const sender = await newWallet(net);
    const recipient = (await kit.generateKeyPairSigner()).address;
    await net.rpc('surfnet_setTokenAccount', [sender.address, mint, { amount: 5_000_000 }]);
    const tx = await send(net, sender, await tokenPaymentInstructions(sender, recipient, 1_250_000, 'spl payment', { mint }));
    assert.equal(tx.response.result, tx.signature, JSON.stringify(tx.response.error));
    await net.rpc('localnet_advance', [{ slots: 1 }]);
    const got = await net.rpc('getTransaction', [tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'jsonParsed' }]);
    assert.equal(got.meta.err, null);
    const ix = got.transaction.message.instructions.find((i) => i.parsed?.type === 'transferChecked');
    assert.equal(ix.programId, TOKEN_PROGRAM);
    assert.equal(ix.program, 'spl-token');
    const post = got.meta.postTokenBalances.filter((b) => b.mint === mint);
    assert.deepEqual(
      post.map((b) => [b.owner, b.programId, b.uiTokenAmount.amount]).sort(),
      [
        [recipient, TOKEN_PROGRAM, '1250000'],
        [sender.address, TOKEN_PROGRAM, '3750000'],
      ].sort(),
    );
    assert.equal((await net.rpc('getTokenAccountBalance', [await ata(recipient, mint)])).value.uiAmountString, '1.25');
  }
});

test('getTokenAccountsByOwner separates a wallet\'s SPL Token and Token-2022 accounts by programId', async () => {
  const w = await newWallet(net, 1n);
  await net.rpc('surfnet_setTokenAccount', [w.address, EXPECTED.mainnet.USDC[0], { amount: 1 }]);
  await net.rpc('surfnet_setTokenAccount', [w.address, USDG, { amount: 2 }]);
  const spl = (await net.rpc('getTokenAccountsByOwner', [w.address, { programId: TOKEN_PROGRAM }, { encoding: 'jsonParsed' }])).value;
  const t22 = (await net.rpc('getTokenAccountsByOwner', [w.address, { programId: TOKEN_2022_PROGRAM }, { encoding: 'jsonParsed' }])).value;
  assert.deepEqual(spl.map((a) => a.account.data.parsed.info.mint), [EXPECTED.mainnet.USDC[0]]);
  assert.deepEqual(t22.map((a) => a.account.data.parsed.info.mint), [USDG]);
  assert.equal(t22[0].account.data.program, 'spl-token-2022');
});

const tmpdir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'localnet-mints-'));

for (const snapshot of [true, false]) {
  test(`persistence (${snapshot ? 'LiteSVM snapshot' : 'accounts only'}): the mints, their supply and the balances survive a restart`, async () => {
    const file = path.join(tmpdir(), 'state.json');
    let n = await start();
    const owner = (await kit.generateKeyPairSigner()).address;
    const funded = {};
    for (const { mint } of ALL) {
      await n.rpc('surfnet_setTokenAccount', [owner, mint, { amount: 4_200_000 }]);
      funded[mint] = (await raw(n, mint)).bytes.toString('base64');
    }
    n.chain.save(file, { snapshot });
    await n.close();

    n = await start({ statePath: file });
    try {
      for (const { sym, mint, program } of ALL) {
        const acc = await raw(n, mint);
        assert.equal(acc.owner, program, sym);
        assert.equal(acc.bytes.toString('base64'), funded[mint], `${sym} mint bytes (supply, extensions) are kept`);
        const address = await ata(owner, mint, program);
        assert.equal((await n.rpc('getTokenAccountBalance', [address])).value.amount, '4200000', sym);
      }
      const again = await n.rpc('localnet_getMintAuthority');
      assert.deepEqual(again.networks, auth.networks);
    } finally {
      await n.close();
    }
  });
}

test('a state saved before a mint existed gets the mint on load, and the other mints keep their supply', async () => {
  const file = path.join(tmpdir(), 'old.json');
  let n = await start();
  const owner = (await kit.generateKeyPairSigner()).address;
  await n.rpc('surfnet_setTokenAccount', [owner, PYUSD, { amount: 7 }]);
  // as if the state had been written by a localnet without USDG
  await n.rpc('surfnet_setAccount', [USDG, { lamports: 0 }]);
  assert.equal((await n.rpc('getAccountInfo', [USDG])).value, null);
  n.chain.save(file);
  await n.close();
  n = await start({ statePath: file });
  try {
    const usdg = await n.rpc('getAccountInfo', [USDG, { encoding: 'jsonParsed' }]);
    assert.equal(usdg.value.owner, TOKEN_2022_PROGRAM);
    assert.equal(usdg.value.data.parsed.info.supply, '0');
    assert.equal((await n.rpc('getTokenSupply', [PYUSD])).value.amount, '7');
  } finally {
    await n.close();
  }
});
