// The pay_fetch tool against the running service, the official MPP seller
// and a resource offering both protocols (internal/httpapi/payfetch_ts_test.go
// starts them), and the MCP endpoint's pay_fetch description through the
// official TypeScript MCP client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { descriptions } from '../dist/index.js';
import { byName, env, mcpClient } from './lib.mjs';

const MPP_SELLER = env('MPP_SELLER_URL');
const BOTH = env('BOTH_URL');

test('pay_fetch: buys from the MPP seller and says which protocol it paid', async () => {
  const r = JSON.parse(await byName.pay_fetch.invoke({ url: `${MPP_SELLER}/weather`, max_usdc: 0.05 }));
  assert.equal(r.status, 200, JSON.stringify(r));
  assert.equal(JSON.parse(r.text).route, '/weather');
  assert.deepEqual([r.payment.status, r.payment.protocol, r.payment.asset, r.payment.settled], ['paid', 'mpp', 'USDC', true]);
  assert.equal(r.payment.amount, Number(env('MPP_PRICE')) / 1e6);
  assert.match(r.payment.transaction, /^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
});

test('pay_fetch: a resource offering both, preferring x402, is paid by x402', async () => {
  const r = JSON.parse(await byName.pay_fetch.invoke({ url: `${BOTH}/weather`, prefer: 'x402' }));
  assert.equal(r.status, 200, JSON.stringify(r));
  assert.deepEqual([r.payment.protocol, r.payment.settled], ['x402', true]);
});

test('pay_fetch: the MCP endpoint offers it with the same description', async () => {
  const mcp = await mcpClient();
  const { tools } = await mcp.listTools();
  assert.equal(tools.find((t) => t.name === 'pay_fetch')?.description, descriptions.pay_fetch);
  await mcp.close();
});
