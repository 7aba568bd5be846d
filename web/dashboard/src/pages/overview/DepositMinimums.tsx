import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Form } from '../../components/Form';
import { errorText } from '../../format';
import { accountSettingsQuery, type DepositMinimums, setDepositMinimums } from '../../services/accountSettings';
import { queryClient } from '../../services/queryClient';
import type { Session } from '../../services/session';
import { useAct } from './useAct';

/** minimumProblem says why s is no minimum of at most max with at most decimals places ('' when it is one). */
export const minimumProblem = (s: string, max: number, decimals: number) =>
  new RegExp(`^\\d+(\\.\\d{1,${decimals}})?$`).test(s.trim()) && Number(s) <= max ? '' : `0 to ${max}, ${decimals} decimals at most.`;

const fields = [
  { key: 'usdc', label: 'USD stablecoins (USDC)', max: 1_000_000, decimals: 6 },
  { key: 'eur', label: 'EUR stablecoins (EURC)', max: 1_000_000, decimals: 6 },
  { key: 'sol', label: 'SOL', max: 1_000, decimals: 9 },
] as const;

/**
 * DepositMinimumsCard shows the smallest deposit announced per currency:
 * smaller ones are recorded and listed, marked below minimum, but send no
 * tx.received, so strangers' dust does not reach every endpoint. Owners
 * change them.
 */
export function DepositMinimumsCard({ mins, session, onChange }: { mins: DepositMinimums; session: Session; onChange: () => void }) {
  const { busy, error, act } = useAct(onChange);
  const [values, setValues] = useState({ usdc: String(mins.usdc), eur: String(mins.eur), sol: String(mins.sol) });
  const owner = session.role === 'owner';
  const problems = fields.map((f) => minimumProblem(values[f.key], f.max, f.decimals));
  const problem = problems.find((p) => p !== '') ?? '';
  return (
    <section className="card mt-4" aria-labelledby="ov-deposit-min" data-section="deposit-minimums">
      <h2 id="ov-deposit-min" className="mt-0">
        Deposit minimums
      </h2>
      <p>Deposits below these are recorded and listed (marked below minimum) but not announced to webhook endpoints.</p>
      {owner ? (
        <Form
          className="grid gap-2"
          aria-label="Deposit minimums"
          noValidate
          onSubmit={() =>
            act(() =>
              setDepositMinimums({ deposit_min_usdc: Number(values.usdc), deposit_min_eur: Number(values.eur), deposit_min_sol: Number(values.sol) }),
            )
          }
        >
          {fields.map((f, i) => (
            <div key={f.key} className="flex flex-wrap items-center gap-2">
              <label htmlFor={`dm-${f.key}`} className="w-56">
                {f.label}
              </label>
              <input
                id={`dm-${f.key}`}
                className="w-28"
                inputMode="decimal"
                autoComplete="off"
                value={values[f.key]}
                aria-invalid={problems[i] !== ''}
                onChange={(e) => setValues({ ...values, [f.key]: e.target.value })}
              />
            </div>
          ))}
          <button type="submit" className="btn justify-self-start" disabled={busy || problem !== ''}>
            Save
          </button>
          {problem && <p className="field-error">{problem}</p>}
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
        </Form>
      ) : (
        <dl className="my-2 grid grid-cols-3 gap-2">
          {fields.map((f) => (
            <div key={f.key}>
              <dt className="text-xs font-semibold text-muted">{f.label}</dt>
              <dd data-field={`deposit-min-${f.key}`} className="tabular-nums">
                {mins[f.key]}
              </dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

/** DepositMinimums reads the account's settings and shows DepositMinimumsCard; a save reads them again. */
export function DepositMinimums({ session }: { session: Session }) {
  const q = useQuery(accountSettingsQuery());
  if (q.error) return <p className="error">Could not load the deposit minimums: {errorText(q.error)}</p>;
  if (!q.data) return null;
  const refresh = () => void queryClient.invalidateQueries({ queryKey: accountSettingsQuery().queryKey });
  return <DepositMinimumsCard key={JSON.stringify(q.data)} mins={q.data} session={session} onChange={refresh} />;
}
