import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Form } from '../../components/Form';
import { errorText, sols, usdc } from '../../format';
import { type Balance, fundWallet } from '../../services/wallets';
import { amountProblem } from './policy/policy-draft';

/** Fund mints test USDC and airdrops SOL to the wallet; only shown on a local chain. */
export function Fund({ id, onFunded }: { id: string; onFunded: (b: Balance) => void }) {
  const [amounts, setAmounts] = useState({ usdc: '10', sol: '1' });
  // The API's caps for one call: 1,000,000 USDC and 100 SOL.
  const issue = (s: string, max: number, unit: string) =>
    s.trim() === '' ? '' : amountProblem(s) || (Number(s) > max ? `At most ${max.toLocaleString('en-US')} ${unit} at a time.` : '');
  const problems = { usdc: issue(amounts.usdc, 1_000_000, 'USDC'), sol: issue(amounts.sol, 100, 'SOL') };
  const nothing = !(Number(amounts.usdc) > 0) && !(Number(amounts.sol) > 0);

  const funding = useMutation({
    mutationFn: () => {
      const body: { usdc?: number; sol?: number } = {};
      if (Number(amounts.usdc) > 0) body.usdc = Number(amounts.usdc);
      if (Number(amounts.sol) > 0) body.sol = Number(amounts.sol);
      return fundWallet(id, body);
    },
    onSuccess: onFunded,
  });
  const busy = funding.isPending;
  const error = funding.error ? errorText(funding.error) : '';
  const done: Balance | null = funding.data ?? null;
  const fund = () => funding.mutate();

  return (
    <Form className="mt-4 border-t border-line pt-3" aria-label="Fund on localnet" noValidate onSubmit={fund}>
      <h3 className="mt-0">Fund on localnet</h3>
      <p className="hint">Test tokens on this local chain: minted USDC and airdropped SOL, worth nothing.</p>
      <div className="my-2 grid grid-cols-[repeat(auto-fit,minmax(7rem,10rem))] gap-3">
        {(['usdc', 'sol'] as const).map((k) => (
          <div className="field" key={k}>
            <label htmlFor={`fund-${k}`}>{k.toUpperCase()}</label>
            <input
              id={`fund-${k}`}
              inputMode="decimal"
              autoComplete="off"
              value={amounts[k]}
              aria-invalid={problems[k] !== ''}
              aria-describedby={`fund-${k}-note`}
              onChange={(e) => setAmounts({ ...amounts, [k]: e.target.value })}
            />
            <span id={`fund-${k}-note`} className="field-error">
              {problems[k]}
            </span>
          </div>
        ))}
      </div>
      <button type="submit" className="btn" disabled={busy || nothing || problems.usdc !== '' || problems.sol !== ''}>
        {busy ? 'Funding…' : 'Fund'}
      </button>
      {done && (
        <p role="status" className="ok mt-2 mb-0">
          Funded: the wallet now holds {usdc(done.usdc)} and {sols(done.sol)}.
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </Form>
  );
}
