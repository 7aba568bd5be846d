import { useState } from 'react';
import { Form } from '../../components/Form';
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
 * SolForm asks for an amount of SOL: its label, its field (value, and
 * invalid when the amount is not one to send) and its button, off while
 * busy or invalid. name is the form's accessible name.
 */
function SolForm(props: {
  name: string;
  id: string;
  label: string;
  value: string;
  invalid: boolean;
  busy: boolean;
  submit: string;
  onChange: (value: string) => void;
  onSubmit: () => void;
}) {
  const { name, id, label, value, invalid, busy, submit, onChange, onSubmit } = props;
  return (
    <Form className="flex flex-wrap items-center gap-2" aria-label={name} noValidate onSubmit={onSubmit}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="w-28"
        inputMode="decimal"
        autoComplete="off"
        value={value}
        aria-invalid={invalid}
        onChange={(e) => onChange(e.target.value)}
      />
      <button type="submit" className="btn" disabled={busy || invalid}>
        {submit}
      </button>
    </Form>
  );
}

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
          <SolForm
            name="Daily budget"
            id="fp-budget"
            label="Daily budget (SOL)"
            value={budget}
            invalid={budgetIssue !== ''}
            busy={busy}
            submit="Save"
            onChange={setBudget}
            onSubmit={() => act(() => setFeePayer({ enabled: true, daily_budget_sol: Number(budget) }))}
          />
          {session.localChain && (
            <SolForm
              name="Fund the fee payer on localnet"
              id="fp-fund"
              label="Fund on localnet (SOL)"
              value={fund}
              invalid={fundIssue !== ''}
              busy={busy}
              submit="Fund"
              onChange={setFund}
              onSubmit={() => act(() => fundFeePayer(Number(fund)))}
            />
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
