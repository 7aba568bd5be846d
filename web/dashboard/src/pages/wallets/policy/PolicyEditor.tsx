import { useEffect, useState } from 'react';
import { Form } from '../../../components/Form';
import { errorText } from '../../../format';
import type { Asset } from '../../../services/assets';
import { type Wallet, updatePolicy } from '../../../services/wallets';
import { Diff } from './Diff';
import { PolicyFields } from './PolicyFields';
import { type Draft, changesOf, draftOf, patchOf, problemsOf, proposedOf } from './policy-draft';
import { TrySend } from './TrySend';

/**
 * PolicyEditor lets an owner change a wallet's policy: the amounts, the
 * optional rules and the allowlist checked while typed, the changes listed
 * old → new, a send tried against the proposed policy, and a save that
 * sends only what changed. people, when known, is the account's owners and
 * approvers (the most approvals a wallet may need).
 */
export function PolicyEditor({
  agent,
  people,
  assets,
  onSaved,
}: {
  agent: Pick<Wallet, 'id' | 'policy'>;
  people?: number;
  /** The network's assets (GET /assets), when read. */
  assets?: Asset[];
  onSaved: (a: Wallet) => void;
}) {
  const current = agent.policy;
  const [draft, setDraft] = useState<Draft>(() => draftOf(current));
  // base is the policy the draft started from. When the page sees another
  // policy (someone else saved one), an untouched draft follows it; an
  // edited one stays, and its changes are then shown against the new one.
  const [base, setBase] = useState(current);
  const [moved, setMoved] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const problems = problemsOf(draft, { count: people, kept: current.approvals_required });
  const next = problems.any ? null : proposedOf(draft);
  const changes = next ? changesOf(current, next) : [];

  const currentKey = JSON.stringify(current);
  useEffect(() => {
    if (JSON.stringify(base) === currentKey) return;
    const untouched = !problemsOf(draft).any && changesOf(base, proposedOf(draft)).length === 0;
    if (untouched) setDraft(draftOf(current));
    else setMoved(true);
    setBase(current);
  }, [currentKey]);

  async function save() {
    if (!next || changes.length === 0) return;
    setBusy(true);
    setError('');
    setSaved(false);
    try {
      const a = await updatePolicy(agent.id, patchOf(current, next));
      setDraft(draftOf(a.policy));
      setBase(a.policy);
      setMoved(false);
      setSaved(true);
      onSaved(a);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div>
      <Form id="policy-form" aria-label="Edit the policy" noValidate onSubmit={save}>
        <PolicyFields
          prefix="policy"
          draft={draft}
          problems={problems}
          people={people}
          assets={assets}
          onChange={(d) => {
            setDraft(d);
            setSaved(false);
          }}
        />
      </Form>
      <section className="mt-4 border-t border-line pt-1" aria-label="Changes">
        <h3>Changes</h3>
        {moved && (
          <p className="warn" role="status">
            The policy was changed by someone else while you edited it: the changes below are against the policy as it is now.
          </p>
        )}
        {problems.any ? (
          <p className="field-error">Fix the errors above to see the changes and save.</p>
        ) : changes.length === 0 ? (
          <p className="hint">{saved ? 'Saved.' : 'No changes.'}</p>
        ) : (
          <Diff changes={changes} testid="diff" />
        )}
      </section>
      <TrySend
        walletId={agent.id}
        proposed={next ? patchOf(current, next) : null}
        changed={changes.length > 0}
        assets={assets?.map((a) => a.symbol) ?? draft.assets}
      />
      {error && (
        <p role="alert" className="error">
          Not saved: {error}
        </p>
      )}
      <div className="buttons mt-4">
        <button type="submit" form="policy-form" className="btn btn-primary" disabled={!next || changes.length === 0 || busy}>
          {busy ? 'Saving…' : 'Save policy'}
        </button>
        <button
          className="btn"
          type="button"
          disabled={busy || (changes.length === 0 && !problems.any)}
          onClick={() => {
            setDraft(draftOf(current));
            setMoved(false);
            setError('');
          }}
        >
          Discard changes
        </button>
      </div>
    </div>
  );
}
