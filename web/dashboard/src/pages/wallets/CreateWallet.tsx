import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { Form } from '../../components/Form';
import { errorText } from '../../format';
import { invalidate } from '../../services/queryClient';
import { assetsQuery } from '../../services/assets';
import { usersQuery } from '../../services/users';
import { createWallet, walletKeys } from '../../services/wallets';
import { PolicyFields } from './policy/PolicyFields';
import { DEFAULT_DRAFT, type Draft, inputOf, problemsOf, proposedOf } from './policy/policy-draft';

/** CreateWallet is the owners' form for a new wallet and its policy; it opens the new wallet's page. */
export function CreateWallet({ onClose }: { onClose: () => void }) {
  const [label, setLabel] = useState('');
  const [draft, setDraft] = useState<Draft>(DEFAULT_DRAFT);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // The owners and approvers bound the approvals, as in the editor; until
  // they are read, the API's answer says it.
  const { data: users } = useQuery(usersQuery());
  const people = users?.filter((u) => u.role !== 'viewer').length;
  const { data: assets } = useQuery(assetsQuery());
  const problems = problemsOf(draft, { count: people });
  const labelProblem = label.trim() === '' ? 'Give the wallet a name.' : label.trim().length > 100 ? 'At most 100 characters.' : '';
  const [touched, setTouched] = useState(false);
  const navigate = useNavigate();

  async function create() {
    setTouched(true);
    if (labelProblem || problems.any) return;
    setBusy(true);
    setError('');
    try {
      const a = await createWallet(label.trim(), inputOf(proposedOf(draft)));
      void invalidate(walletKeys.all);
      void navigate({ to: '/wallets/$id', params: { id: a.id } });
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  }

  return (
    <Form className="card mb-4 grid gap-4" aria-label="Create a wallet" noValidate onSubmit={create}>
      <h2 className="mt-0 mb-0">New wallet</h2>
      <div className="field">
        <label htmlFor="new-label">Label</label>
        <input
          id="new-label"
          value={label}
          maxLength={120}
          autoComplete="off"
          aria-invalid={touched && labelProblem !== ''}
          aria-describedby="new-label-note"
          onChange={(e) => setLabel(e.target.value)}
        />
        <span id="new-label-note" className={touched && labelProblem ? 'field-error' : 'hint'}>
          {touched && labelProblem ? labelProblem : 'A name people and agents know it by.'}
        </span>
      </div>
      <PolicyFields prefix="new" draft={draft} problems={problems} people={people} assets={assets} onChange={setDraft} />
      {error && (
        <p role="alert" className="error">
          Not created: {error}
        </p>
      )}
      <div className="buttons">
        <button type="submit" className="btn btn-primary" disabled={busy || problems.any || (touched && labelProblem !== '')}>
          {busy ? 'Creating…' : 'Create wallet'}
        </button>
        <button type="button" className="btn" onClick={onClose} disabled={busy}>
          Cancel
        </button>
      </div>
    </Form>
  );
}
