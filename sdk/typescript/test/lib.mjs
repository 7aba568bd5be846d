// Shared by the test files: the running service go test started (it passes
// the URLs, keys and wallets in the environment: internal/httpapi's
// sdk_test.go and x402tools_test.go), clients of it with the admin and the
// agent key, and random recipients.
import { randomBytes } from 'node:crypto';
import { AgentWallet } from '../dist/index.js';

/** env is a variable go test sets; without it the file was not run through go test. */
export const env = (n) => {
  const v = process.env[n];
  if (!v) throw new Error(`${n} is not set: run through go test (make test)`);
  return v;
};
export const API_URL = env('API_URL');
/** WALLET is the wallet the agent key sends from. */
export const WALLET = env('WALLET_ID');
export const admin = new AgentWallet({ apiKey: env('ADMIN_KEY'), baseUrl: API_URL });
export const agent = new AgentWallet({ apiKey: env('AGENT_KEY'), baseUrl: API_URL });

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
// A random 32-byte address in base58; the first byte is kept non-zero, as
// a leading zero byte would need base58's leading '1' this loop omits.
export function address() {
  const bytes = randomBytes(32);
  bytes[0] |= 1;
  let n = BigInt('0x' + bytes.toString('hex'));
  let s = '';
  while (n > 0n) {
    s = ALPHABET[Number(n % 58n)] + s;
    n /= 58n;
  }
  return s;
}
