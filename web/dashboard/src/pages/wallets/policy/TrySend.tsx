import { useEffect, useRef, useState } from 'react';
import { Form } from '../../../components/Form';
import { addressProblem } from '../../../address';
import { errorText } from '../../../format';
import { type PolicyInput, type Preview, previewSend } from '../../../services/wallets';
import { amountProblem } from './policy-draft';
import { Figures, Outcome } from './PreviewResult';

/**
 * TrySend previews a send under the proposed policy (and the current one,
 * for comparison) before the owner saves: nothing is sent or reserved.
 * proposed is what a save would send (the API reads a preview's policy as
 * a change of the wallet's, so a rule removed is sent as null); null while
 * the draft has errors. assets are the symbols offered for the send (USDC
 * first).
 */
export function TrySend({
  walletId,
  proposed,
  changed,
  assets = ['USDC'],
}: {
  walletId: string;
  proposed: PolicyInput | null;
  changed: boolean;
  assets?: string[];
}) {
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
  const [asset, setAsset] = useState('USDC');
  const [memo, setMemo] = useState('');
  const [result, setResult] = useState<{ next: Preview; now: Preview | null } | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const policyKey = JSON.stringify(proposed);
  // A result is about the policy it was asked under: a change drops it,
  // and an answer to a question about an older draft is not shown.
  const current = useRef(policyKey);
  current.current = policyKey;
  useEffect(() => {
    setResult(null);
  }, [policyKey]);

  const toProblem = to === '' ? '' : addressProblem(to.trim());
  const amountIssue = amount === '' ? '' : amountProblem(amount, true);
  const ready = proposed !== null && to !== '' && amount !== '' && !toProblem && !amountIssue;

  async function run() {
    if (!ready || !proposed) return;
    setBusy(true);
    setError('');
    const body = {
      to: to.trim(),
      amount: Number(amount.trim()),
      ...(asset !== 'USDC' ? { asset } : {}),
      ...(memo.trim() ? { memo: memo.trim() } : {}),
    };
    const asked = policyKey;
    try {
      const [next, now] = await Promise.all([
        previewSend(walletId, body, changed ? proposed : undefined),
        changed ? previewSend(walletId, body) : Promise.resolve(null),
      ]);
      if (asked === current.current) setResult({ next, now });
    } catch (e) {
      setResult(null);
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  const r = result?.next;
  return (
    <Form className="mt-4 border-t border-line pt-1" aria-label="Try a send" noValidate onSubmit={run}>
      <h3>Try a send</h3>
      <p className="hint">What a send would do under the {changed ? 'proposed' : 'current'} policy. Nothing is sent.</p>
      <div className="my-2 grid gap-x-4 gap-y-2 sm:grid-cols-[minmax(0,3fr)_minmax(0,1.4fr)_minmax(0,2fr)]">
        <div className="field [&_input]:font-mono [&_input]:text-sm">
          <label htmlFor="try-to">To</label>
          <input
            id="try-to"
            value={to}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={toProblem !== ''}
            aria-describedby="try-to-note"
            onChange={(e) => setTo(e.target.value)}
          />
          <span id="try-to-note" className={toProblem ? 'field-error' : 'hint'}>
            {toProblem}
          </span>
        </div>
        <div className="field">
          <label htmlFor="try-amount">Amount</label>
          <span className="flex items-center gap-1.5 [&>input]:min-w-0 [&>input]:flex-1">
            <input
              id="try-amount"
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              aria-invalid={amountIssue !== ''}
              aria-describedby="try-amount-note"
              onChange={(e) => setAmount(e.target.value)}
            />{' '}
            <select aria-label="Asset" className="w-auto" value={asset} onChange={(e) => setAsset(e.target.value)}>
              {[...new Set(['USDC', ...assets])].map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </span>
          <span id="try-amount-note" className={amountIssue ? 'field-error' : 'hint'}>
            {amountIssue}
          </span>
        </div>
        <div className="field">
          <label htmlFor="try-memo">Memo (optional)</label>
          <input id="try-memo" value={memo} maxLength={200} onChange={(e) => setMemo(e.target.value)} />
        </div>
      </div>
      <button type="submit" className="btn" disabled={!ready || busy}>
        {busy ? 'Trying…' : 'Try it'}
      </button>
      {proposed === null && <p className="hint">Fix the policy's errors to try a send.</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {r && result && (
        <div className="mt-3 rounded-md bg-subtle px-3 py-2 [&_p]:my-1" role="status">
          <p>
            {changed ? 'Under the proposed policy' : 'Under the current policy'}: <Outcome p={r} testid="preview-outcome" />
          </p>
          {result.now && (
            <p>
              Under the current policy: <Outcome p={result.now} testid="preview-current" />
            </p>
          )}
          <Figures r={r} />
        </div>
      )}
    </Form>
  );
}
