// The x402_fetch tool against the running service and a real x402 seller
// (internal/httpapi/x402tools_test.go starts both), in a scripted
// tool-calling loop, and the MCP endpoint's x402_fetch through the official
// TypeScript MCP client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { descriptions } from '../dist/index.js';
import { byName, env, mcpClient, runAgent, WALLET } from './lib.mjs';

const SELLER = env('SELLER_URL');

test('x402: a scripted agent loop buys the weather with x402_fetch and reads it', async () => {
  const model = fakeModel()
    .respondWithTools([{ name: 'x402_fetch', args: { url: `${SELLER}/weather`, max_usdc: 0.05 }, id: 'call_1' }])
    .respond((messages) => {
      const r = JSON.parse(messages.at(-1).content);
      const report = JSON.parse(r.text).report;
      return new AIMessage(`It is ${report}; paid ${r.payment.amount} USDC in ${r.payment.transaction}.`);
    });
  const messages = await runAgent(model, [new HumanMessage(`What is the weather? ${SELLER}/weather sells it.`)]);
  // What the tool answered last, as the model read it.
  const result = JSON.parse(messages.findLast((m) => m instanceof ToolMessage).content);
  assert.equal(result.status, 200, JSON.stringify(result));
  assert.match(result.content_type, /application\/json/);
  assert.equal(result.truncated, false);
  assert.equal(result.payment.status, 'paid');
  assert.equal(result.payment.settled, true);
  assert.equal(result.payment.amount, Number(env('SELLER_PRICE')) / 1e6);
  assert.match(messages.at(-1).content, /^It is sunny; paid [0-9.]+ USDC in [1-9A-HJ-NP-Za-km-z]{80,90}\.$/);
});

test('x402: x402_fetch answers a parked payment and a cap as results the model can read', async () => {
  const parked = JSON.parse(await byName.x402_fetch.invoke({ url: `${SELLER}/premium` }));
  assert.equal(parked.payment.status, 'pending_approval');
  assert.match(parked.payment.approval_id, /^ap_/);
  assert.ok(parked.payment.approve_url.endsWith(`/dashboard/approvals/${parked.payment.approval_id}`));
  assert.match(parked.next, /approval_id/);
  const capped = JSON.parse(await byName.x402_fetch.invoke({ url: `${SELLER}/weather`, max_usdc: 0.000001 }));
  assert.equal(capped.status, 422, JSON.stringify(capped));
  const free = JSON.parse(await byName.x402_fetch.invoke({ url: `${SELLER}/health` }));
  assert.deepEqual([free.status, free.payment, JSON.parse(free.text)], [200, null, { ok: true }]);
});

test('x402: the MCP endpoint (official TypeScript client) buys with x402_fetch; same description', async () => {
  const mcp = await mcpClient();
  const { tools: listed } = await mcp.listTools();
  const t = listed.find((t) => t.name === 'x402_fetch');
  assert.equal(t?.description, descriptions.x402_fetch);
  const res = await mcp.callTool({ name: 'x402_fetch', arguments: { wallet_id: WALLET, url: `${SELLER}/weather` } });
  assert.equal(res.isError ?? false, false, JSON.stringify(res));
  assert.equal(res.structuredContent.status, 200);
  assert.equal(res.structuredContent.payment.status, 'paid');
  assert.equal(JSON.parse(res.structuredContent.text).route, '/weather');
  await mcp.close();
});
