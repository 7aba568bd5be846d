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
 * eachLimited calls fn on every item with at most limit calls in flight
 * and reports each outcome as it settles (a failure is reported, never
 * thrown). It stops starting calls once live() turns false.
 */
export async function eachLimited<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  settled: (item: T, result: PromiseSettledResult<R>) => void,
  live: () => boolean = () => true,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && live()) {
      const item = items[next++];
      let result: PromiseSettledResult<R>;
      try {
        result = { status: 'fulfilled', value: await fn(item) };
      } catch (reason) {
        result = { status: 'rejected', reason };
      }
      settled(item, result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** FeePayer is the account's fee payer: on or off, address, SOL, budget and today's spend. */
export type FeePayer = Schemas['FeePayer'];

/** getFeePayer reads the fee payer, with its live SOL balance. */
export const getFeePayer = () => call<FeePayer>('GET', `${API}/fee-payer`);

/** setFeePayer turns the fee payer on or off and sets its budget (owners). */
export const setFeePayer = (body: Schemas['PutFeePayerInputBody']) => call<FeePayer>('PUT', `${API}/fee-payer`, body);

/** fundFeePayer adds test SOL to the fee payer (local chains only: 409 elsewhere). */
export const fundFeePayer = (sol: number) => call<Balance>('POST', `${API}/fee-payer/fund`, { sol });
