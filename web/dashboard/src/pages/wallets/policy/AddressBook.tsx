import { type Entry, MAX_LABEL, type Problems, newEntry } from './policy-draft';

/**
 * AddressBook edits an allowlist as rows of address and optional label.
 * Each address is checked while typed (base58 of 32 bytes, no duplicate).
 */
export function AddressBook({
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
