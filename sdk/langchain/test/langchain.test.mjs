// @agentwallet/langchain against the running service (go test starts it:
// internal/httpapi/sdk_test.go), and the MCP endpoint through the official
// TypeScript MCP client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { agentWalletTools, descriptions } from '../dist/index.js';
import { agent } from '../../typescript/test/lib.mjs';
import { address, byName, env, mcpClient, runAgent, WALLET } from './lib.mjs';

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

test('other assets: send_usdc in EURC, the balance of each asset, the transaction under its asset, a EUR block in euros', async () => {
  const tools = Object.fromEntries(agentWalletTools({ client: agent, walletId: env('EUR_WALLET') }).map((t) => [t.name, t]));
  const sent = JSON.parse(await tools.send_usdc.invoke({ to: address(), amount: 1.25, asset: 'eurc' }));
  assert.deepEqual([sent.status, sent.asset], ['sent', 'EURC']);
  const blocked = JSON.parse(await tools.send_usdc.invoke({ to: address(), amount: 12, asset: 'EURC' }));
  assert.deepEqual([blocked.status, blocked.reason, blocked.asset, 'remaining_today_usdc' in blocked], ['blocked', 'exceeds_max_tx', 'EURC', false]);
  assert.equal(typeof blocked.remaining_today_eur, 'number');
  const notListed = JSON.parse(await tools.send_usdc.invoke({ to: address(), amount: 1, asset: 'USDG' }));
  assert.equal(notListed.reason, 'asset_not_allowed');
  assert.match(notListed.next, /policy\.assets/);
  const info = JSON.parse(await tools.get_wallet_info.invoke({}));
  assert.deepEqual(info.policy.assets, ['USDC', 'EURC']);
  assert.deepEqual(
    info.assets.map((a) => a.symbol),
    ['USDC', 'EURC'],
  );
  const { transactions } = JSON.parse(await tools.list_recent_transactions.invoke({ asset: 'EURC' }));
  assert.ok(transactions.length > 0 && transactions.every((t) => t.asset === 'eurc'), JSON.stringify(transactions));
  const preview = JSON.parse(await tools.preview_send.invoke({ to: address(), amount: 1, asset: 'EURC' }));
  assert.deepEqual([preview.asset, preview.currency, typeof preview.remaining_today_eur], ['EURC', 'EUR', 'number']);
});

test('money coming in: deposits in list_recent_transactions, get_balance_history', async () => {
  const tools = Object.fromEntries(agentWalletTools({ client: agent, walletId: env('DEPOSIT_WALLET') }).map((t) => [t.name, t]));
  const { transactions: received } = JSON.parse(await tools.list_recent_transactions.invoke({ direction: 'receive' }));
  assert.deepEqual(
    received.map((t) => [t.direction, t.asset, t.amount, t.from, t.to, t.status]).sort(),
    [
      ['receive', 'sol', 0.25, env('DEPOSIT_SENDER'), undefined, 'confirmed'],
      ['receive', 'usdc', 2.5, env('DEPOSIT_SENDER'), undefined, 'confirmed'],
    ],
  );
  assert.equal(JSON.parse(await tools.list_recent_transactions.invoke({ direction: 'send' })).transactions.length, 0);
  assert.equal(JSON.parse(await tools.list_recent_transactions.invoke({})).transactions.length, 2);
  await assert.rejects(tools.list_recent_transactions.invoke({ direction: 'in' }));
  // The toolkit's own wallet: its sends name their recipient.
  const sent = JSON.parse(await byName.list_recent_transactions.invoke({ direction: 'send', limit: 2 })).transactions;
  assert.ok(sent.length > 0 && sent.every((t) => t.direction === 'send' && t.asset === 'usdc' && t.to && !t.from), JSON.stringify(sent));

  const at = new Date(Date.now() + 1000).toISOString();
  const now = JSON.parse(await tools.get_balance_history.invoke({ at }));
  assert.deepEqual(now.series.map((s) => s.points.map((p) => [p.asset, p.amount])), [[['USDC', 2.5]]]);
  const every = JSON.parse(await tools.get_balance_history.invoke({ asset: 'all', at }));
  const held = Object.fromEntries(every.series.map((s) => [s.asset, s.points[0].amount]));
  assert.deepEqual([held.USDC, held.EURC, held.SOL], [2.5, 0, 1.25]);
  const [days] = JSON.parse(await tools.get_balance_history.invoke({ interval: 'day', to: at })).series;
  assert.equal(days.points.length, 31);
  assert.equal(days.points[30].amount, 2.5);
  const bad = JSON.parse(await tools.get_balance_history.invoke({ at: 'yesterday' }));
  assert.equal(bad.status, 422);
  assert.equal(JSON.parse(await tools.get_balance_history.invoke({ asset: 'DOGE' })).status, 422);
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
