// The overview's reads: the newest wallets with their policies, each
// wallet's live balance (a chain read per wallet), today's spend and the
// newest transactions. The types are the SDK's, generated from
// openapi/openapi.yaml, so a change of the API shows up here at build time.
import { API, type Analytics, type Balance, type Schemas, call } from './api';

/** getBalance reads one wallet's SOL and USDC from the chain (no cache on the server). */
export const getBalance = (id: string) => call<Balance>('GET', `${API}/wallets/${encodeURIComponent(id)}/balance`);

/** getDaySpend is the analytics of one UTC day (YYYY-MM-DD): spend per wallet. */
export const getDaySpend = (day: string) => call<Analytics>('GET', `${API}/analytics?${new URLSearchParams({ from: day, to: day })}`);

/**
 * limited is fn with at most n calls in flight: the others wait their turn
 * (a freed slot passes straight to the next in line).
 */
export function limited<T, R>(n: number, fn: (arg: T) => Promise<R>): (arg: T) => Promise<R> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (arg) => {
    if (running < n) running++;
    else await new Promise<void>((go) => waiting.push(go));
    try {
      return await fn(arg);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** FeePayer is the account's fee payer: on or off, address, SOL, budget and today's spend. */
export type FeePayer = Schemas['FeePayer'];

/** getFeePayer reads the fee payer, with its live SOL balance. */
export const getFeePayer = () => call<FeePayer>('GET', `${API}/fee-payer`);

/** setFeePayer turns the fee payer on or off and sets its budget (owners). */
export const setFeePayer = (body: Schemas['PutFeePayerInputBody']) => call<FeePayer>('PUT', `${API}/fee-payer`, body);

/** fundFeePayer adds test SOL to the fee payer (local chains only: 409 elsewhere). */
export const fundFeePayer = (sol: number) => call<Balance>('POST', `${API}/fee-payer/fund`, { sol });
