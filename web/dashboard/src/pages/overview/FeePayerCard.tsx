import { useState } from 'react';
import { short, sols } from '../../format';
import { type FeePayer, fundFeePayer, setFeePayer } from '../../services/feePayer';
import type { Session } from '../../services/session';
import { Meter } from './Meter';
import { useAct } from './useAct';

/** budgetProblem says why s is no daily budget ('' when it is one). */
export const budgetProblem = (s: string) =>
  /^\d+(\.\d{1,9})?$/.test(s.trim()) && Number(s) > 0 && Number(s) <= 100 ? '' : 'Above 0 and at most 100 SOL, 9 decimals at most.';

/** fundProblem says why s is no amount to fund ('' when it is one). */
export const fundProblem = (s: string) =>
  /^\d+(\.\d{1,6})?$/.test(s.trim()) && Number(s) > 0 && Number(s) <= 100 ? '' : 'Above 0 and at most 100 SOL, 6 decimals at most.';

/**
 * FeePayerCard is the fee payer with sponsorship on: its address, SOL and
 * today's spend against the daily budget, with a warning when its SOL is
 * below one day's budget (the API's `low`). Owners set the budget, turn it
 * off and, on a local chain, fund it. error is the latest read's failure.
 */
export function FeePayerCard({ fp, error, session, onChange }: { fp: FeePayer; error: string; session: Session; onChange: () => void }) {
  const { busy, error: actError, act } = useAct(onChange);
  const [budget, setBudget] = useState(String(fp.dailyBudgetSol));
  const [fund, setFund] = useState('1');
  const share = fp.dailyBudgetSol > 0 ? Math.min(1, fp.spentTodaySol / fp.dailyBudgetSol) : 1;
  const text = `${sols(fp.spentTodaySol)} of ${sols(fp.dailyBudgetSol)} today`;
  const budgetIssue = budgetProblem(budget);
  const fundIssue = fundProblem(fund);
  const owner = session.role === 'owner';
  return (
    <section className={`card ${fp.low ? 'border-2 border-bad bg-bad-soft' : ''}`} aria-labelledby="ov-fp" data-section="fee-payer">
      <h2 id="ov-fp" className={`mt-0 ${fp.low ? 'text-bad' : ''}`}>
        {fp.low ? '⚠ Fee payer low on SOL' : 'Fee payer'}
      </h2>
      <p>Pays the network fee, and a new recipient's token account rent, for every wallet's sends: the wallets need no SOL.</p>
      <dl className="my-2 grid grid-cols-2 gap-2">
        <div>
          <dt className="text-xs font-semibold text-muted">Address</dt>
          <dd>
            <code title={fp.address ?? ''} data-field="fee-payer-address">
              {fp.address ? short(fp.address) : '—'}
            </code>
          </dd>
        </div>
        <div>
          <dt className="text-xs font-semibold text-muted">SOL</dt>
          <dd data-field="fee-payer-sol" className={`tabular-nums ${fp.low ? 'font-bold text-bad' : ''}`}>
            {fp.sol === null ? <span className="text-warn italic">unavailable</span> : sols(fp.sol)}
          </dd>
        </div>
      </dl>
      <div className="grid gap-1 text-sm">
        <span data-field="fee-payer-spend" className="tabular-nums">
          {text} ({fp.transactionsToday} {fp.transactionsToday === 1 ? 'transaction' : 'transactions'})
        </span>
        <Meter share={share} label="Fee payer: spend today against the daily budget" max={fp.dailyBudgetSol} value={fp.spentTodaySol} text={text} />
      </div>
      {fp.low && (
        <p data-field="fee-payer-warning">
          Its SOL is below one day's budget ({sols(fp.dailyBudgetSol)}): send SOL to <code>{fp.address}</code> before sends fail for want of fees.
        </p>
      )}
      {error && (
        <p className="notice text-xs" title={error}>
          Not refreshed: {error}
        </p>
      )}
      {owner && (
        <div className="mt-3 grid gap-2">
          <form
            className="flex flex-wrap items-center gap-2"
            aria-label="Daily budget"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              void act(() => setFeePayer({ enabled: true, daily_budget_sol: Number(budget) }));
            }}
          >
            <label htmlFor="fp-budget">Daily budget (SOL)</label>
            <input
              id="fp-budget"
              className="w-28"
              inputMode="decimal"
              autoComplete="off"
              value={budget}
              aria-invalid={budgetIssue !== ''}
              onChange={(e) => setBudget(e.target.value)}
            />
            <button type="submit" className="btn" disabled={busy || budgetIssue !== ''}>
              Save
            </button>
          </form>
          {session.localChain && (
            <form
              className="flex flex-wrap items-center gap-2"
              aria-label="Fund the fee payer on localnet"
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                void act(() => fundFeePayer(Number(fund)));
              }}
            >
              <label htmlFor="fp-fund">Fund on localnet (SOL)</label>
              <input
                id="fp-fund"
                className="w-28"
                inputMode="decimal"
                autoComplete="off"
                value={fund}
                aria-invalid={fundIssue !== ''}
                onChange={(e) => setFund(e.target.value)}
              />
              <button type="submit" className="btn" disabled={busy || fundIssue !== ''}>
                Fund
              </button>
            </form>
          )}
          <button type="button" className="btn justify-self-start" disabled={busy} onClick={() => void act(() => setFeePayer({ enabled: false }))}>
            Turn off fee sponsorship
          </button>
          {(budgetIssue || fundIssue) && <p className="field-error">{budgetIssue || fundIssue}</p>}
          {actError && (
            <p role="alert" className="error">
              {actError}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
