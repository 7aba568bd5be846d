import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { start, newWallet, buildTx, transferSol, ata, USDC, kit } from '../testing/helpers.js';

const SERVER = fileURLToPath(new URL('../server.js', import.meta.url));
const tmpdir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'localnet-test-'));

test('state survives a restart (in-process)', async () => {
  const file = path.join(tmpdir(), 'state.json');
  let net = await start({ statePath: file });
  const payer = await newWallet(net, 3n);
  const dest = await kit.generateKeyPairSigner();
  await net.rpc('surfnet_setTokenAccount', [payer.address, USDC, { amount: 4_200_000 }]);
  const custom = (await kit.generateKeyPairSigner()).address;
  await net.rpc('surfnet_setAccount', [custom, { lamports: 1234567, data: 'cafe', owner: dest.address, executable: false }]);
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  await net.rpc('localnet_advance', [{ slots: 5 }]);
  const { value: bh } = await net.rpc('getLatestBlockhash');
  const slot = await net.rpc('getSlot');
  const height = await net.rpc('getBlockHeight');
  const payerBal = (await net.rpc('getBalance', [payer.address])).value;
  await net.close();
  assert.ok(fs.existsSync(file));

  net = await start({ statePath: file });
  try {
    assert.ok((await net.rpc('getSlot')) >= slot);
    assert.ok((await net.rpc('getBlockHeight')) >= height);
    assert.equal((await net.rpc('getBalance', [payer.address])).value, payerBal);
    assert.equal((await net.rpc('getBalance', [dest.address])).value, 1_000_000_000);
    assert.equal((await net.rpc('getTokenAccountBalance', [await ata(payer.address)])).value.amount, '4200000');
    const acc = await net.rpc('getAccountInfo', [custom, { encoding: 'base64' }]);
    assert.equal(acc.value.lamports, 1234567);
    assert.equal(acc.value.owner, dest.address);
    assert.equal(Buffer.from(acc.value.data[0], 'base64').toString('hex'), 'cafe');
    const st = (await net.rpc('getSignatureStatuses', [[tx.signature]])).value[0];
    assert.equal(st.err, null);
    assert.equal(st.confirmationStatus, 'confirmed');
    const got = await net.rpc('getTransaction', [tx.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);
    assert.equal(got.meta.fee, 5000);
    assert.equal((await net.rpc('isBlockhashValid', [bh.blockhash])).value, true);
    // replay is not executed twice
    assert.equal(await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]), tx.signature);
    assert.equal((await net.rpc('getBalance', [dest.address])).value, 1_000_000_000);
    // and the chain keeps working
    const tx2 = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
    await net.rpc('sendTransaction', [tx2.base64, { encoding: 'base64' }]);
    assert.equal((await net.rpc('getBalance', [dest.address])).value, 2_000_000_000);
  } finally {
    await net.close();
  }
});

test('state without a LiteSVM snapshot is rebuilt from the saved accounts', async () => {
  // LiteSVM builds before 1.5.0 (used on platforms without a 1.5.0 binary) cannot snapshot
  const file = path.join(tmpdir(), 'accounts-only.json');
  let net = await start();
  const payer = await newWallet(net, 3n);
  const dest = await kit.generateKeyPairSigner();
  await net.rpc('surfnet_setTokenAccount', [payer.address, USDC, { amount: 9_000_000 }]);
  const tx = await buildTx(net, payer, [transferSol(payer, dest.address, 1_000_000_000n)]);
  await net.rpc('sendTransaction', [tx.base64, { encoding: 'base64' }]);
  const { value: bh } = await net.rpc('getLatestBlockhash');
  const supply = (await net.rpc('getTokenSupply', [USDC])).value.amount;
  net.chain.save(file, { snapshot: false });
  await net.close();

  net = await start({ statePath: file });
  try {
    assert.equal((await net.rpc('getBalance', [dest.address])).value, 1_000_000_000);
    assert.equal((await net.rpc('getTokenAccountBalance', [await ata(payer.address)])).value.amount, '9000000');
    assert.equal((await net.rpc('getTokenSupply', [USDC])).value.amount, supply);
    assert.equal((await net.rpc('getSignatureStatuses', [[tx.signature]])).value[0].err, null);
    assert.equal((await net.rpc('isBlockhashValid', [bh.blockhash])).value, true);
    const tx2 = await buildTx(net, payer, [transferSol(payer, dest.address, 500_000_000n)], { blockhash: bh.blockhash });
    await net.rpc('sendTransaction', [tx2.base64, { encoding: 'base64' }]);
    assert.equal((await net.rpc('getBalance', [dest.address])).value, 1_500_000_000);
  } finally {
    await net.close();
  }
});

function spawnServer(args) {
  const child = spawn(process.execPath, [SERVER, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ready: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, ready, exited, stderr: () => stderr };
}

async function rpcAt(url, method, params) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = await res.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

test('CLI: ready line, SIGTERM/SIGINT save state and exit 0', async () => {
  const file = path.join(tmpdir(), 'cli-state.json');
  const who = (await kit.generateKeyPairSigner()).address;

  let s = spawnServer(['--slot-ms', '50', '--state', file]);
  const line = await s.ready;
  assert.match(line, /^localnet ready http:\/\/127\.0\.0\.1:\d+$/);
  const url = line.split(' ')[2];
  await rpcAt(url, 'requestAirdrop', [who, 777_000_000]);
  await new Promise((r) => setTimeout(r, 200));
  const slot = await rpcAt(url, 'getSlot');
  assert.ok(slot >= 2, `slot ${slot}`);
  s.child.kill('SIGTERM');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.ok(fs.existsSync(file));

  s = spawnServer(['--state', file]);
  const url2 = (await s.ready).split(' ')[2];
  assert.equal((await rpcAt(url2, 'getBalance', [who])).value, 777_000_000);
  assert.ok((await rpcAt(url2, 'getSlot')) >= slot);
  s.child.kill('SIGINT');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});

test('CLI: bad arguments exit with status 2', async () => {
  const s = spawnServer(['--bogus']);
  await assert.rejects(s.ready, /exited 2/);
});
