// HTTP transport: JSON-RPC over POST, single and batch requests.
import http from 'node:http';
import { Chain } from './chain.js';
import { Rpc, isExemptMethod } from './rpc.js';
import { parse, stringify } from './json.js';

const MAX_BODY = 50 * 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a localnet. Options: host, port (0 = any free port), slotMs,
 * statePath, saveIntervalMs, log (function(string) or null for silence),
 * minPriorityFee (µlamports per compute unit; a congested market, 0 = off).
 * Resolves to { url, host, port, chain, rpc, close() }.
 */
export async function startServer(opts = {}) {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 8899;
  const slotMs = opts.slotMs ?? 400;
  const saveIntervalMs = opts.saveIntervalMs ?? 3000;
  const log = opts.log === undefined ? (m) => process.stderr.write(`localnet: ${m}\n`) : opts.log ?? (() => {});
  const statePath = opts.statePath ?? null;

  const chain = Chain.open({ statePath, log });
  const rpc = new Rpc(chain, { log, random: opts.random });
  if (opts.minPriorityFee) chain.minPriorityFee = BigInt(opts.minPriorityFee);

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      log(`request failed: ${e?.stack ?? e}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.keepAliveTimeout = 5000;

  async function handle(req, res) {
    const pathname = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && pathname === '/health') {
      const down = rpc.faults.down;
      res.writeHead(down ? 503 : 200, { 'content-type': 'text/plain' });
      res.end(down ? 'unhealthy' : 'ok');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' });
      res.end('Used HTTP Method is not allowed. POST or OPTIONS is required');
      return;
    }
    const chunks = [];
    let size = 0;
    for await (const c of req) {
      size += c.length;
      if (size > MAX_BODY) {
        res.writeHead(413, { 'content-type': 'text/plain' });
        res.end('Payload Too Large');
        return;
      }
      chunks.push(c);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let payload;
    try {
      payload = parse(text);
    } catch {
      send(res, 200, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      return;
    }
    const batch = Array.isArray(payload);
    const reqs = batch ? payload : [payload];
    if (batch && reqs.length === 0) {
      send(res, 200, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
      return;
    }
    const exempt = reqs.every((r) => r && isExemptMethod(r.method));
    if (!exempt) {
      if (rpc.faults.down) {
        const id = batch ? null : payload?.id ?? null;
        send(res, 503, { jsonrpc: '2.0', error: { code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: null } }, id });
        return;
      }
      if (rpc.faults.latencyMs > 0) await sleep(rpc.faults.latencyMs);
    }
    const out = [];
    for (const r of reqs) {
      const resp = await rpc.handle(r);
      if (resp) out.push(resp);
    }
    if (!batch) {
      if (out.length === 0) {
        res.writeHead(204);
        res.end();
      } else send(res, 200, out[0]);
      return;
    }
    if (out.length === 0) {
      res.writeHead(204);
      res.end();
      return;
    }
    send(res, 200, out);
  }

  function send(res, status, body) {
    const s = stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(s) });
    res.end(s);
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = server.address().port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${actualPort}`;

  const slotTimer = setInterval(() => chain.tick(), slotMs);
  const saveTimer = statePath
    ? setInterval(() => {
        if (!chain.dirty) return;
        try {
          chain.save();
        } catch (e) {
          log(`state save failed: ${e.message}`);
        }
      }, saveIntervalMs)
    : null;
  slotTimer.unref?.();
  saveTimer?.unref?.();

  let closed = false;
  async function close() {
    if (closed) return;
    closed = true;
    clearInterval(slotTimer);
    if (saveTimer) clearInterval(saveTimer);
    if (statePath) {
      try {
        chain.save();
      } catch (e) {
        log(`state save failed: ${e.message}`);
      }
    }
    await new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    });
  }

  return { url, host, port: actualPort, chain, rpc, server, close };
}
