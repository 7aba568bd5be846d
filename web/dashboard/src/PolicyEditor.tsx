import { useEffect, useRef, useState } from 'react';
import type { Agent } from './api';
import { type Policy, type PolicyInput, type Preview, previewSend, updatePolicy } from './api-wallets';
import { addressProblem } from './address';
import { errorText, short, usdc } from './format';
import { Status } from './components/Status';
import {
  type Change,
  type Draft,
  type Entry,
  FIELDS,
  MAX_LABEL,
  type Problems,
  amountProblem,
  changesOf,
  draftOf,
  inputOf,
  newEntry,
  patchOf,
  problemsOf,
  proposedOf,
} from './policy-draft';

/** AmountField is one USDC amount with its problem said beside it as it is typed. */
function AmountField(props: { id: string; label: string; hint: string; value: string; problem: string; onChange: (v: string) => void }) {
  const { id, label, hint, value, problem, onChange } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <span className="flex items-center gap-1.5 [&>input]:min-w-0 [&>input]:flex-1">
        <input
          id={id}
          inputMode="decimal"
          autoComplete="off"
          value={value}
          aria-invalid={problem !== ''}
          aria-describedby={`${id}-note`}
          onChange={(e) => onChange(e.target.value)}
        />{' '}
        USDC
      </span>
      <span id={`${id}-note`} className={problem ? 'field-error' : 'hint'}>
        {problem || hint}
      </span>
    </div>
  );
}

/**
 * AddressBook edits an allowlist as rows of address and optional label.
 * Each address is checked while typed (base58 of 32 bytes, no duplicate).
 */
function AddressBook({
  prefix,
  entries,
  problems,
  onChange,
}: {
  prefix: string;
  entries: Entry[];
  problems: Problems;
  onChange: (e: Entry[]) => void;
}) {
  const set = (key: number, part: Partial<Entry>) => onChange(entries.map((e) => (e.key === key ? { ...e, ...part } : e)));
  return (
    <fieldset className="mb-3">
      <legend>Allowlist</legend>
      <p className="hint">{entries.length === 0 ? 'Empty: the wallet may pay any address.' : 'The wallet may pay only these addresses.'}</p>
      {entries.length > 0 && (
        <ol aria-label="Allowlist entries" className="my-2 grid list-none gap-3 p-0">
          {entries.map((e, i) => {
            const p = problems.entries[i] ?? { address: '', label: '' };
            const id = `${prefix}-entry-${e.key}`;
            return (
              <li
                key={e.key}
                data-row={i + 1}
                className="grid items-start gap-2 border-b border-line pb-3 sm:grid-cols-[minmax(0,3fr)_minmax(0,2fr)_auto]"
              >
                <div className="field [&_input]:font-mono [&_input]:text-sm">
                  <label htmlFor={`${id}-address`}>Address {i + 1}</label>
                  <input
                    id={`${id}-address`}
                    value={e.address}
                    spellCheck={false}
                    autoComplete="off"
                    aria-invalid={p.address !== ''}
                    aria-describedby={`${id}-address-note`}
                    onChange={(ev) => set(e.key, { address: ev.target.value })}
                  />
                  <span id={`${id}-address-note`} className={p.address ? 'field-error' : 'hint'}>
                    {p.address || 'Valid address.'}
                  </span>
                </div>
                <div className="field">
                  <label htmlFor={`${id}-label`}>Label {i + 1} (optional)</label>
                  <input
                    id={`${id}-label`}
                    value={e.label}
                    maxLength={MAX_LABEL + 20}
                    aria-invalid={p.label !== ''}
                    aria-describedby={`${id}-label-note`}
                    onChange={(ev) => set(e.key, { label: ev.target.value })}
                  />
                  <span id={`${id}-label-note`} className={p.label ? 'field-error' : 'hint'}>
                    {p.label}
                  </span>
                </div>
                <button
                  type="button"
                  className="btn justify-self-start sm:mt-6"
                  aria-label={`Remove address ${i + 1}`}
                  onClick={() => onChange(entries.filter((x) => x.key !== e.key))}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ol>
      )}
      {problems.list && <p className="field-error">{problems.list}</p>}
      <button type="button" className="btn" onClick={() => onChange([...entries, newEntry()])}>
        Add address
      </button>
    </fieldset>
  );
}

/** PolicyFields are the policy's inputs, shared by the create form and the editor. */
export function PolicyFields({
  prefix,
  draft,
  problems,
  onChange,
}: {
  prefix: string;
  draft: Draft;
  problems: Problems;
  onChange: (d: Draft) => void;
}) {
  return (
    <>
      <div className="mb-3 grid grid-cols-[repeat(auto-fit,minmax(12rem,1fr))] gap-x-4 gap-y-3">
        {FIELDS.map((f) => (
          <AmountField
            key={f.name}
            id={`${prefix}-${f.name}`}
            label={f.label}
            hint={f.hint}
            value={draft[f.name]}
            problem={problems.fields[f.name]}
            onChange={(v) => onChange({ ...draft, [f.name]: v })}
          />
        ))}
      </div>
      <AddressBook prefix={prefix} entries={draft.entries} problems={problems} onChange={(entries) => onChange({ ...draft, entries })} />
    </>
  );
}

/** PolicyView shows a policy to those who may not change it. */
export function PolicyView({ policy }: { policy: Policy }) {
  const labels = policy.allowlist_labels ?? {};
  return (
    <div>
      <dl className="my-2 grid grid-cols-[repeat(auto-fit,minmax(9rem,1fr))] gap-x-4 gap-y-2 [&_dt]:text-xs [&_dt]:font-semibold [&_dt]:text-muted">
        {FIELDS.map((f) => (
          <div key={f.name}>
            <dt>{f.label}</dt>
            <dd data-field={f.name}>{usdc(policy[f.name])}</dd>
          </div>
        ))}
      </dl>
      <h3>Allowlist</h3>
      {policy.allowlist.length === 0 ? (
        <p className="hint">Empty: the wallet may pay any address.</p>
      ) : (
        <ul className="m-0 grid list-none gap-1 p-0" aria-label="Allowlist">
          {policy.allowlist.map((a) => (
            <li key={a}>
              {labels[a] && <strong>{labels[a]} </strong>}
              <code>{a}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** policySummary is a policy in one line, for lists. */
export function policySummary(p: Policy): string {
  const n = p.allowlist.length;
  return `max ${usdc(p.max_tx_usdc)} a send · ${usdc(p.daily_limit_usdc)} a day · approval from ${usdc(p.approval_threshold_usdc)} · ${
    n === 0 ? 'any recipient' : `${n} allowed recipient${n === 1 ? '' : 's'}`
  }`;
}

function ChangeItem({ c }: { c: Change }) {
  switch (c.kind) {
    case 'field':
      return (
        <li data-change={c.field}>
          {c.name}: <del>{usdc(c.from)}</del> → <ins>{usdc(c.to)}</ins>
        </li>
      );
    case 'added':
      return (
        <li data-change="added">
          Allowlist: added <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'removed':
      return (
        <li data-change="removed">
          Allowlist: removed <code>{c.address}</code>
          {c.label && ` (${c.label})`}
        </li>
      );
    case 'relabelled':
      return (
        <li data-change="relabelled">
          Allowlist: <code>{short(c.address)}</code> relabelled <del>{c.from || 'no label'}</del> → <ins>{c.to || 'no label'}</ins>
        </li>
      );
  }
}

/** Diff lists the changes a save would make. */
export function Diff({ changes, testid }: { changes: Change[]; testid?: string }) {
  return (
    <ul
      className="my-1 grid gap-1 pl-5 [&_code]:break-all [&_del]:text-bad [&_ins]:font-semibold [&_ins]:text-ok [&_ins]:no-underline"
      data-testid={testid}
    >
      {changes.map((c, i) => (
        <ChangeItem key={i} c={c} />
      ))}
    </ul>
  );
}

function Outcome({ p, testid }: { p: Preview; testid: string }) {
  return (
    <span data-testid={testid}>
      <Status status={p.outcome} label={p.outcome === 'pending_approval' ? 'pending approval' : p.outcome} data-outcome={p.outcome} />
      {p.reason && (
        <>
          {' '}
          <code data-reason={p.reason}>{p.reason}</code>
        </>
      )}
    </span>
  );
}

/**
 * TrySend previews a send under the proposed policy (and the current one,
 * for comparison) before the owner saves: nothing is sent or reserved.
 */
function TrySend({ walletId, proposed, changed }: { walletId: string; proposed: PolicyInput | null; changed: boolean }) {
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
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
    const body = { to: to.trim(), amount: Number(amount.trim()), ...(memo.trim() ? { memo: memo.trim() } : {}) };
    const asked = policyKey;
    try {
      const [next, now] = await Promise.all([previewSend(walletId, body, proposed), changed ? previewSend(walletId, body) : Promise.resolve(null)]);
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
    <form
      className="mt-4 border-t border-line pt-1"
      aria-label="Try a send"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
    >
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
            USDC
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
          <dl className="my-2 grid grid-cols-[repeat(auto-fit,minmax(9rem,1fr))] gap-x-4 gap-y-2 [&_dt]:text-xs [&_dt]:font-semibold [&_dt]:text-muted tabular-nums">
            <div>
              <dt>Spent today</dt>
              <dd>{usdc(r.spent_today_usdc)}</dd>
            </div>
            <div>
              <dt>Remaining today</dt>
              <dd data-testid="preview-remaining">{usdc(r.remaining_today_usdc)}</dd>
            </div>
            <div>
              <dt>Daily limit</dt>
              <dd>{usdc(r.daily_limit_usdc)}</dd>
            </div>
            <div>
              <dt>Max per send</dt>
              <dd>{usdc(r.max_tx_usdc)}</dd>
            </div>
            <div>
              <dt>Approval from</dt>
              <dd>{usdc(r.approval_threshold_usdc)}</dd>
            </div>
          </dl>
        </div>
      )}
    </form>
  );
}

/**
 * PolicyEditor lets an owner change a wallet's policy: the amounts and the
 * allowlist checked while typed, the changes listed old → new, a send tried
 * against the proposed policy, and a save that sends only what changed.
 */
export function PolicyEditor({ agent, onSaved }: { agent: Agent; onSaved: (a: Agent) => void }) {
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
  const problems = problemsOf(draft);
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
      <form
        id="policy-form"
        aria-label="Edit the policy"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <PolicyFields
          prefix="policy"
          draft={draft}
          problems={problems}
          onChange={(d) => {
            setDraft(d);
            setSaved(false);
          }}
        />
      </form>
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
      <TrySend walletId={agent.id} proposed={next ? inputOf(next) : null} changed={changes.length > 0} />
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
