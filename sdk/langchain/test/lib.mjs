// Shared by the test files: the running service as the SDK's tests reach it
// (its URL, the agent key's client, the wallet, random recipients), the
// tools for that client and wallet, a scripted agent loop over them, and the
// service's MCP endpoint through the official TypeScript MCP client.
import { ToolMessage } from '@langchain/core/messages';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { agentWalletTools } from '../dist/index.js';
import { agent, API_URL, env, WALLET } from '../../typescript/test/lib.mjs';

export { address, API_URL, env, WALLET } from '../../typescript/test/lib.mjs';

export const tools = agentWalletTools({ client: agent, walletId: WALLET, dashboardUrl: API_URL });
export const byName = Object.fromEntries(tools.map((t) => [t.name, t]));

/**
 * runAgent plays a scripted chat model's turns (four at most) with the
 * tools: each tool call's output goes back as a tool message. It extends
 * messages and answers them.
 */
export async function runAgent(model, messages) {
  const bound = model.bindTools(tools);
  for (let turn = 0; turn < 4; turn++) {
    const ai = await bound.invoke(messages);
    messages.push(ai);
    if (!ai.tool_calls?.length) break;
    for (const call of ai.tool_calls) {
      const out = await byName[call.name].invoke(call.args);
      messages.push(new ToolMessage({ content: out, tool_call_id: call.id }));
    }
  }
  return messages;
}

/** mcpClient is the official MCP client connected to the service's /mcp with the agent key (close it after). */
export async function mcpClient() {
  const transport = new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${env('AGENT_KEY')}` } },
  });
  const mcp = new Client({ name: 'test', version: '1.0.0' });
  await mcp.connect(transport);
  return mcp;
}
