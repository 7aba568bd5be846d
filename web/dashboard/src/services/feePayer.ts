// The account's fee payer: with sponsorship on, one address pays every
// wallet's network fees (and new recipients' token account rent) in SOL.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call } from './api';
import { poll } from './queryClient';
import type { Balance } from './wallets';

export type FeePayerFromAPI = Schemas['FeePayer'];

/** FeePayer is the fee payer as the pages read it: on or off, address, SOL, budget and today's spend. */
export interface FeePayer {
  enabled: boolean;
  address: string | null;
  /** Its SOL, read from the chain; null when the read failed. */
  sol: number | null;
  dailyBudgetSol: number;
  spentTodaySol: number;
  transactionsToday: number;
  /** Its SOL is below one day's budget. */
  low: boolean;
}

export const toFeePayer = (f: FeePayerFromAPI): FeePayer => ({
  enabled: f.enabled,
  address: f.address,
  sol: f.sol,
  dailyBudgetSol: f.daily_budget_sol,
  spentTodaySol: f.spent_today_sol,
  transactionsToday: f.transactions_today,
  low: f.low,
});

export const feePayerKeys = {
  all: ['fee-payer'] as const,
};

/** feePayerQuery reads the fee payer with its live SOL balance: a chain read, polled every ms whatever the event stream says. */
export const feePayerQuery = (ms: number) =>
  queryOptions({
    queryKey: feePayerKeys.all,
    queryFn: ({ signal }) => call<FeePayerFromAPI>('GET', `${API}/fee-payer`, undefined, signal).then(toFeePayer),
    ...poll(ms, false),
  });

/** setFeePayer turns the fee payer on or off and sets its budget (owners). */
export const setFeePayer = (body: Schemas['PutFeePayerInputBody']) => call<FeePayerFromAPI>('PUT', `${API}/fee-payer`, body).then(toFeePayer);

/** fundFeePayer adds test SOL to the fee payer (local chains only: 409 elsewhere). */
export const fundFeePayer = (sol: number) => call<Balance>('POST', `${API}/fee-payer/fund`, { sol });
