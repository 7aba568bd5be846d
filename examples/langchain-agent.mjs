// A LangChain agent that pays with the agent wallet's tools.
//
//   make dev                               # the service on this machine
//   source .dev/credentials.env            # API_URL, API_KEY, SOLANA_RPC_URL
//   WALLET_ID=<an agent's id> node examples/langchain-agent.mjs
//
// Offline (no model key) a scripted chat model from @langchain/core plays the
// model: it calls send_usdc, then reads the result. With OPENAI_API_KEY set
// and @langchain/openai installed, a real model decides instead.
import { AgentWallet } from '@agentwallet/sdk';
import { agentWalletTools } from '@agentwallet/langchain';
import { fakeModel } from '@langchain/core/testing';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';

const apiUrl = (process.env.AGENTWALLET_API_URL ?? process.env.API_URL ?? 'http://127.0.0.1:8080').replace(/\/api\/public\/v1\/?$/, '');
const apiKey = process.env.AGENTWALLET_API_KEY ?? process.env.API_KEY;
const walletId = process.env.WALLET_ID;
const rpc = process.env.SOLANA_RPC_URL ?? 'http://127.0.0.1:8899';
const to = process.env.PAY_TO ?? '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const amount = Number(process.env.PAY_AMOUNT ?? '1.5');
if (!apiKey || !walletId) {
  console.error('set AGENTWALLET_API_KEY (or API_KEY) and WALLET_ID: see the comment at the top of this file');
  process.exit(2);
}

const client = new AgentWallet({ apiKey, baseUrl: apiUrl });
const tools = agentWalletTools({ client, walletId, dashboardUrl: apiUrl });
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));

async function model() {
  if (process.env.OPENAI_API_KEY) {
    try {
      const { ChatOpenAI } = await import('@langchain/openai');
      return new ChatOpenAI({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' });
    } catch {
      console.error('OPENAI_API_KEY is set but @langchain/openai is not installed (npm i @langchain/openai); using the scripted model');
    }
  }
  return fakeModel()
    .respondWithTools([{ name: 'send_usdc', args: { to, amount, memo: 'example' }, id: 'call_1' }])
    .respond((messages) => {
      const r = JSON.parse(messages.at(-1).content);
      return new AIMessage(`Done: the payment is ${r.status}${r.reason ? ` (${r.reason})` : ''}.`);
    });
}

const llm = (await model()).bindTools(tools);
const messages = [
  new SystemMessage('You pay for data with the send_usdc tool. Never retry a payment that is pending_approval.'),
  new HumanMessage(`Pay ${to} ${amount} USDC for the dataset.`),
];
let outcome;
for (let turn = 0; turn < 5; turn++) {
  const ai = await llm.invoke(messages);
  messages.push(ai);
  if (!ai.tool_calls?.length) break;
  for (const call of ai.tool_calls) {
    const out = await byName[call.name].invoke(call.args);
    if (call.name === 'send_usdc') outcome = JSON.parse(out);
    messages.push(new ToolMessage({ content: out, tool_call_id: call.id }));
  }
}
console.log(`model: ${messages.at(-1).content}`);
console.log(`send outcome: ${JSON.stringify(outcome)}`);

// The recipient's USDC on the chain (the local chain's devnet mint).
const res = await fetch(rpc, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'getTokenAccountsByOwner',
    params: [to, { mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' }, { encoding: 'jsonParsed' }],
  }),
});
const { result } = await res.json();
const micros = (result?.value ?? []).reduce((n, a) => n + Number(a.account.data.parsed.info.tokenAmount.amount), 0);
console.log(`recipient ${to} holds ${micros / 1e6} USDC on ${rpc}`);
