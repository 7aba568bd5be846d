// @agentwallet/langchain against the running service (go test starts it:
// internal/httpapi/sdk_test.go), and the MCP endpoint through the official
// TypeScript MCP client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { descriptions } from '../dist/index.js';
import { address, byName, mcpClient, runAgent, WALLET } from './lib.mjs';

test('each tool invoked directly', async () => {
  const sent = JSON.parse(await byName.send_usdc.invoke({ to: address(), amount: 1, memo: 'lc' }));
  assert.equal(sent.status, 'sent');
  const parked = JSON.parse(await byName.send_usdc.invoke({ to: address(), amount: 6 }));
  assert.equal(parked.status, 'pending_approval');
  assert.ok(parked.approve_url.endsWith(`/dashboard/approvals/${parked.approval_id}`));
  assert.match(parked.next, /do not retry/);
  const blocked = JSON.parse(await byName.send_usdc.invoke({ to: address(), amount: 11 }));
  assert.deepEqual([blocked.status, blocked.reason], ['blocked', 'exceeds_max_tx']);
  const status = JSON.parse(await byName.get_approval_status.invoke({ approval_id: parked.approval_id }));
  assert.equal(status.status, 'pending');
  const info = JSON.parse(await byName.get_wallet_info.invoke({}));
  assert.equal(info.state, 'active');
  assert.equal(typeof info.usdc, 'number');
  const recent = JSON.parse(await byName.list_recent_transactions.invoke({ limit: 3 }));
  assert.ok(recent.transactions.length > 0 && recent.transactions.length <= 3);
  const preview = JSON.parse(await byName.preview_send.invoke({ to: address(), amount: 11 }));
  assert.deepEqual([preview.outcome, preview.reason], ['blocked', 'exceeds_max_tx']);
  // A bad argument is refused by the schema, before any call.
  await assert.rejects(byName.send_usdc.invoke({ to: 'nope', amount: -1 }));
});

test('an agent loop with a scripted chat model sends and reads the outcome', async () => {
  const to = address();
  const model = fakeModel()
    .respondWithTools([{ name: 'send_usdc', args: { to, amount: 2.5, memo: 'loop' }, id: 'call_1' }])
    .respond((messages) => {
      const result = JSON.parse(messages.at(-1).content);
      return new AIMessage(`The payment is ${result.status} (${result.signature ?? result.approval_id ?? result.reason}).`);
    });
  const messages = await runAgent(model, [new HumanMessage(`Pay ${to} 2.5 USDC for the dataset.`)]);
  const last = messages.at(-1);
  assert.match(last.content, /^The payment is sent \(/);
});

test('the MCP endpoint through the official TypeScript client: same tools, same descriptions', async () => {
  const mcp = await mcpClient();
  const { tools: listed } = await mcp.listTools();
  assert.deepEqual(listed.map((t) => t.name).sort(), Object.keys(descriptions).sort());
  for (const t of listed) assert.equal(t.description, descriptions[t.name], `${t.name}'s description differs`);
  const res = await mcp.callTool({ name: 'send_usdc', arguments: { wallet_id: WALLET, to: address(), amount: '1' } });
  assert.equal(res.structuredContent.status, 'sent');
  const bad = await mcp.callTool({ name: 'send_usdc', arguments: { wallet_id: WALLET, to: address(), amount: 'one' } });
  assert.equal(bad.isError, true);
  await mcp.close();
});
