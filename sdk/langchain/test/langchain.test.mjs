// @agentwallet/langchain against the running service (go test starts it:
// internal/httpapi/sdk_test.go), and the MCP endpoint through the official
// TypeScript MCP client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { AgentWallet } from '@agentwallet/sdk';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { agentWalletTools, descriptions } from '../dist/index.js';

const env = (n) => {
  const v = process.env[n];
  if (!v) throw new Error(`${n} is not set: run through go test (make test)`);
  return v;
};
const API_URL = env('API_URL');
const WALLET = env('WALLET_ID');
const client = new AgentWallet({ apiKey: env('AGENT_KEY'), baseUrl: API_URL });
const tools = agentWalletTools({ client, walletId: WALLET, dashboardUrl: API_URL });
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
// A random 32-byte address in base58; the first byte is kept non-zero, as
// a leading zero byte would need base58's leading '1' this loop omits.
function address() {
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
  const bound = model.bindTools(tools);
  const messages = [new HumanMessage(`Pay ${to} 2.5 USDC for the dataset.`)];
  for (let turn = 0; turn < 4; turn++) {
    const ai = await bound.invoke(messages);
    messages.push(ai);
    if (!ai.tool_calls?.length) break;
    for (const call of ai.tool_calls) {
      const out = await byName[call.name].invoke(call.args);
      messages.push(new ToolMessage({ content: out, tool_call_id: call.id }));
    }
  }
  const last = messages.at(-1);
  assert.match(last.content, /^The payment is sent \(/);
});

test('the MCP endpoint through the official TypeScript client: same tools, same descriptions', async () => {
  const transport = new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${env('AGENT_KEY')}` } },
  });
  const mcp = new Client({ name: 'test', version: '1.0.0' });
  await mcp.connect(transport);
  const { tools: listed } = await mcp.listTools();
  assert.deepEqual(listed.map((t) => t.name).sort(), Object.keys(descriptions).sort());
  for (const t of listed) assert.equal(t.description, descriptions[t.name], `${t.name}'s description differs`);
  const res = await mcp.callTool({ name: 'send_usdc', arguments: { wallet_id: WALLET, to: address(), amount: '1' } });
  assert.equal(res.structuredContent.status, 'sent');
  const bad = await mcp.callTool({ name: 'send_usdc', arguments: { wallet_id: WALLET, to: address(), amount: 'one' } });
  assert.equal(bad.isError, true);
  await mcp.close();
});
