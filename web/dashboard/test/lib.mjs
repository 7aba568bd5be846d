// Shared by the browser test files: the running service's URLs and keys
// (the Go test passes them in the environment), a Chromium with a test
// wallet injected, API calls with a key, and reads of the localnet.
import { before, after } from 'node:test';
import { readFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import nacl from 'tweetnacl';
import bs58 from 'bs58';
import { createSignInMessageText } from '@solana/wallet-standard-util';

export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through go test (make test)`);
  return v;
};
export const BASE = env('DASHBOARD_URL'); // http://127.0.0.1:port
export const API = `${BASE}/api/public/v1`;
export const AGENT_KEY = env('AGENT_KEY');
export const ADMIN_KEY = env('ADMIN_KEY');
export const WALLET_ID = env('WALLET_ID');
export const RPC = env('RPC_URL');
export const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));
mkdirSync(SHOTS, { recursive: true });
const walletSource = readFileSync(fileURLToPath(new URL('./testwallet.js', import.meta.url)), 'utf8');
export const USDC_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

const keyOf = (seedHex) => nacl.sign.keyPair.fromSeed(Buffer.from(seedHex, 'hex'));
export const owner = keyOf(env('OWNER_SEED'));
export const approver = keyOf(env('APPROVER_SEED'));
export const viewer = keyOf(env('VIEWER_SEED'));
export const stranger = keyOf(env('STRANGER_SEED'));
// The owner of the walk's own account, and that account's admin key.
export const demo = keyOf(env('DEMO_SEED'));
export const DEMO_KEY = env('DEMO_KEY');
// The walk's account's second owner (an owner from the start, added by the operator).
export const coOwner = keyOf(env('DEMO_COOWNER_SEED'));

let browser;
export const consoleErrors = [];

/** useBrowser starts Chromium for the test file (call it once at its top). */
export function useBrowser() {
  before(async () => {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
  });
}

/** page opens the dashboard with a test wallet holding kp (Node keeps the key). */
export async function page(kp, { width = 1200, height = 900, knobs = {}, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme });
  await context.exposeFunction('__testWalletSign', (bytes) => Array.from(nacl.sign.detached(Uint8Array.from(bytes), kp.secretKey)));
  await context.exposeFunction('__testWalletSignIn', (input) => {
    const address = bs58.encode(kp.publicKey);
    const text = new TextEncoder().encode(createSignInMessageText({ ...input, address }));
    return { signedMessage: Array.from(text), signature: Array.from(nacl.sign.detached(text, kp.secretKey)) };
  });
  await context.addInitScript(
    (cfg) => {
      window.__TEST_WALLET__ = cfg;
    },
    { address: bs58.encode(kp.publicKey), publicKey: Array.from(kp.publicKey), ...knobs },
  );
  await context.addInitScript({ content: walletSource });
  const p = await context.newPage();
  p.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  p.on('pageerror', (e) => consoleErrors.push(String(e)));
  return p;
}

/** signIn opens the dashboard on page p and signs in with its test wallet (named walletName). */
export async function signIn(p, walletName = 'Test Wallet') {
  await p.goto(`${BASE}/dashboard/`);
  await p.getByRole('button', { name: `Sign in with ${walletName}` }).click();
  await p.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** signedIn is a page (page's options) signed in with the test wallet holding kp. */
export async function signedIn(kp, options) {
  const p = await page(kp, options);
  await signIn(p);
  return p;
}

export async function api(method, path, key, body) {
  const res = await fetch(`${API}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

/**
 * asSession calls the API as the person signed in on page p (the session
 * cookie, and its CSRF token on unsafe methods): what only people may do,
 * such as reading export requests. It answers the status and the body.
 */
export function asSession(p, method, path, body) {
  return p.evaluate(
    async ({ method, path, body }) => {
      const session = await (await fetch('/api/dashboard/v1/session')).json();
      const res = await fetch(`/api/public/v1${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...(method === 'GET' ? {} : { 'X-CSRF-Token': session.csrf_token }) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: res.status === 204 ? null : await res.json() };
    },
    { method, path, body },
  );
}

export function newAddress() {
  return bs58.encode(nacl.sign.keyPair().publicKey);
}

export async function park(amount, memo) {
  const to = newAddress();
  const { status, body } = await api('POST', `/agents/${WALLET_ID}/send`, AGENT_KEY, { to, amount, memo });
  assert.equal(status, 202, JSON.stringify(body));
  return { id: body.approval_id, to };
}

/** rpc calls the localnet's JSON-RPC and wants an answer without error. */
export async function rpc(method, params) {
  const res = await fetch(RPC, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  assert.equal(body.error, undefined, JSON.stringify(body));
  return body.result;
}

/** EURC_MINT is EURC's devnet mint, which the localnet has (an SPL Token mint, 6 decimals). */
export const EURC_MINT = 'HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr';

/** tokenAccountOf is owner's first account of mint (USDC unless given) on the localnet (it must have one). */
async function tokenAccountOf(owner, mint = USDC_MINT) {
  const { value } = await rpc('getTokenAccountsByOwner', [owner, { mint }, { encoding: 'jsonParsed' }]);
  assert.ok(value.length > 0, `${owner} has no account of ${mint}`);
  return value[0].pubkey;
}

/** depositUSDC pays micros of USDC into owner's USDC account from outside the service (depositToken). */
export const depositUSDC = (owner, micros) => depositToken(owner, USDC_MINT, micros);

/**
 * depositToken pays units of an SPL Token mint (USDC, EURC) into owner's
 * account of it (which must exist: fund the wallet with the asset first)
 * from outside the service: a fresh keypair, given SOL and the token by
 * the localnet's cheat codes, signs an SPL Token Transfer (instruction 3)
 * to it. It answers the signature and the payer's address once the
 * transfer is confirmed.
 */
export async function depositToken(owner, mint, units) {
  const payer = nacl.sign.keyPair();
  const from = bs58.encode(payer.publicKey);
  await rpc('surfnet_setAccount', [from, { lamports: 1_000_000_000 }]);
  await rpc('surfnet_setTokenAccount', [from, mint, { amount: units }]);
  const [source, destination] = [await tokenAccountOf(from, mint), await tokenAccountOf(owner, mint)];
  const { value } = await rpc('getLatestBlockhash', [{ commitment: 'confirmed' }]);
  const amount = Buffer.alloc(8);
  amount.writeBigUInt64LE(BigInt(units));
  // A legacy message: one signer (the payer, paying the fee), two writable
  // accounts, the Token program read-only; one instruction (every length
  // here is under 128: a compact-u16 of one byte).
  const keys = [from, source, destination, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'];
  const message = Buffer.concat([
    Buffer.from([1, 0, 1, keys.length]),
    ...keys.map((k) => Buffer.from(bs58.decode(k))),
    Buffer.from(bs58.decode(value.blockhash)),
    Buffer.from([1, 3, 3, 1, 2, 0, 9, 3]),
    amount,
  ]);
  const tx = Buffer.concat([Buffer.from([1]), Buffer.from(nacl.sign.detached(message, payer.secretKey)), message]);
  const signature = await rpc('sendTransaction', [tx.toString('base64'), { encoding: 'base64' }]);
  await eventually(
    'the deposit confirmed',
    async () => {
      const [s] = (await rpc('getSignatureStatuses', [[signature]])).value;
      assert.equal(s?.err ?? null, null, `the deposit failed: ${JSON.stringify(s)}`);
      return s && ['confirmed', 'finalized'].includes(s.confirmationStatus);
    },
    20000,
  );
  return { signature, from };
}

export async function chainUSDC(owner) {
  const result = await rpc('getTokenAccountsByOwner', [owner, { mint: USDC_MINT }, { encoding: 'jsonParsed' }]);
  return result.value.reduce((n, a) => n + Number(a.account.data.parsed.info.tokenAmount.amount), 0);
}

/** sideways is how far page p scrolls sideways, in px (0 when it fits). */
export const sideways = (p) => p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * phoneProblems answers what on page p, as it is now, does not fit a
 * phone: the page scrolling sideways (document.scrollingElement wider
 * than the window), an element sticking out of the page's width (cut off
 * by a box that hides its overflow: out of reach), and a control a finger
 * must hit smaller than 40 × 40 px (buttons, fields, tabs, links that
 * stand alone; a link inside a sentence, and a checkbox, whose label is
 * the target, are exempt).
 */
export const phoneProblems = (p) =>
  p.evaluate(() => {
    const problems = [];
    const page = document.scrollingElement;
    if (page.scrollWidth > innerWidth) problems.push(`scrolls sideways: ${page.scrollWidth} px wide in ${innerWidth}`);
    const width = document.documentElement.clientWidth;
    const name = (el) =>
      `${el.tagName.toLowerCase()} “${(el.textContent || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ').slice(0, 40)}”`;
    for (const el of document.body.querySelectorAll('*')) {
      if (el.closest('.sr-only')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.left < -0.5 || r.right > width + 0.5) problems.push(`${name(el)} sticks out (${Math.round(r.left)} to ${Math.round(r.right)} px)`);
      const control = el.matches('button, select, textarea, input:not([type=checkbox], [type=radio]), [role=tab], a[href]');
      if (control && getComputedStyle(el).display !== 'inline' && (r.width < 40 || r.height < 40))
        problems.push(`${name(el)} is ${Math.round(r.width)} × ${Math.round(r.height)} px: too small to tap`);
    }
    return problems.slice(0, 10);
  });

export async function eventually(what, fn, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`waited ${ms} ms in vain for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** noConsoleErrors is each file's last test: nothing the pages logged as an error. */
export function assertNoConsoleErrors() {
  // The refusals the tests provoke on purpose (401, 403, the last owner's 409) are the browser's network log.
  assert.deepEqual(
    consoleErrors.filter((e) => !/status of 40[139]/.test(e)),
    [],
  );
}

/** addressOf is a key pair's Solana address. */
export const addressOf = (kp) => bs58.encode(kp.publicKey);

/** usdcText is a USDC amount as the dashboard shows it (en-US, the test browser's locale): 1,234.50 USDC. */
export const usdcText = (n) => `${amountText(n)} USDC`;
/** amountText is a USDC amount without its unit: cents always, micro-USDC at most. */
export const amountText = (n) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/**
 * axeFindings runs axe-core (its WCAG 2.x A and AA rules and best
 * practices) on page p as it is now and answers its serious and critical
 * violations, each as one line naming the rule and the elements.
 */
export async function axeFindings(p) {
  const { violations } = await new AxeBuilder({ page: p }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(' | ')}`,
    );
}

/** accessible fails on any serious or critical axe-core violation on page p; what names the page and its variant. */
export async function accessible(p, what) {
  assert.deepEqual(await axeFindings(p), [], `axe on ${what}`);
}
