#!/usr/bin/env node
// Local Solana chain for development and tests: JSON-RPC over HTTP backed by
// LiteSVM. See README.md.
//
//   node server.js [--host 127.0.0.1] [--port 8899] [--slot-ms 400] [--state FILE]
//                  [--min-priority-fee MICROLAMPORTS]   (or LOCALNET_MIN_PRIORITY_FEE)
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/http.js';

export { startServer } from './lib/http.js';
export { USDC_MAINNET, USDC_DEVNET, MINT_AUTHORITY, FAUCET } from './lib/chain.js';
export { STABLECOINS, USDT_MAINNET, EURC, PYUSD_MAINNET, PYUSD_DEVNET, USDG_MAINNET, USDG_DEVNET } from './lib/mints.js';

const USAGE = 'usage: node server.js [--host 127.0.0.1] [--port 8899] [--slot-ms 400] [--state FILE] [--min-priority-fee MICROLAMPORTS]';

const parseFee = (v, what) => {
  if (!/^[0-9]{1,19}$/.test(String(v).trim()) || BigInt(String(v).trim()) >= 1n << 64n) throw new Error(`invalid ${what}`);
  return BigInt(String(v).trim());
};

export function parseArgs(argv, env = process.env) {
  const opts = { host: '127.0.0.1', port: 8899, slotMs: 400, statePath: null, minPriorityFee: 0n };
  if (env.LOCALNET_MIN_PRIORITY_FEE) opts.minPriorityFee = parseFee(env.LOCALNET_MIN_PRIORITY_FEE, 'LOCALNET_MIN_PRIORITY_FEE');
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      v = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const next = () => {
      if (v !== undefined) return v;
      if (i + 1 >= argv.length) throw new Error(`missing value for ${a}`);
      return argv[++i];
    };
    switch (a) {
      case '--host':
        opts.host = next();
        break;
      case '--port': {
        const p = Number(next());
        if (!Number.isInteger(p) || p < 0 || p > 65535) throw new Error('invalid --port');
        opts.port = p;
        break;
      }
      case '--slot-ms': {
        const s = Number(next());
        if (!Number.isFinite(s) || s < 1) throw new Error('invalid --slot-ms');
        opts.slotMs = s;
        break;
      }
      case '--min-priority-fee':
        opts.minPriorityFee = parseFee(next(), '--min-priority-fee');
        break;
      case '--state':
        opts.statePath = next();
        break;
      case '-h':
      case '--help':
        opts.help = true;
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  return opts;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const srv = await startServer(opts);
  process.stdout.write(`localnet ready ${srv.url}\n`);
  let stopping = false;
  const stop = async (sig) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`localnet: ${sig}, shutting down\n`);
    try {
      await Promise.race([srv.close(), new Promise((r) => setTimeout(r, 2000))]);
    } catch (e) {
      process.stderr.write(`localnet: shutdown error: ${e.message}\n`);
    }
    process.exit(0);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === (await import('node:fs')).realpathSync(process.argv[1])) {
  main().catch((e) => {
    process.stderr.write(`localnet: ${e?.stack ?? e}\n`);
    process.exit(1);
  });
}
