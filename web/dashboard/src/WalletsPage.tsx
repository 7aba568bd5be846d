import { useEffect, useEffectEvent, useRef, useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type Session, listAgents } from './api';
import { usersQuery } from './api-users';
import { createAgent } from './api-wallets';
import { PolicyFields, policySummary } from './PolicyEditor';
import { DEFAULT_DRAFT, type Draft, inputOf, problemsOf, proposedOf } from './policy-draft';
import { errorText } from './format';
import { Empty } from './components/Empty';
import { Middle } from './components/Middle';
import { SkeletonRows } from './components/Skeleton';
import { cursorPages, invalidate, keys } from './queries';
import { StateBadge } from './WalletPage';

/** SEARCH_DELAY is how long typing must pause before the list is asked again. */
const SEARCH_DELAY = 300;

/** CreateWallet is the owners' form for a new wallet and its policy; it opens the new wallet's page. */
function CreateWallet({ onClose }: { onClose: () => void }) {
  const [label, setLabel] = useState('');
  const [draft, setDraft] = useState<Draft>(DEFAULT_DRAFT);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // The owners and approvers bound the approvals, as in the editor; until
  // they are read, the API's answer says it.
  const { data: users } = useQuery(usersQuery);
  const people = users?.filter((u) => u.role !== 'viewer').length;
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
      const a = await createAgent(label.trim(), inputOf(proposedOf(draft)));
      void invalidate(keys.wallets);
      void navigate({ to: '/wallets/$id', params: { id: a.id } });
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  }

  return (
    <form
      className="card mb-4 grid gap-4"
      aria-label="Create a wallet"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
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
      <PolicyFields prefix="new" draft={draft} problems={problems} people={people} onChange={setDraft} />
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
    </form>
  );
}

/** WalletsPage lists the account's wallets, searchable by label or address; owners create new ones. */
export function WalletsPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  // The search is in the URL (?q=…), replaced as one types: a link is the search.
  const q = useSearch({ from: '/wallets' }).q ?? '';
  const navigate = useNavigate({ from: '/wallets' });
  // What this page last put in the URL: another q (back, forward) replaces the text typed.
  const asked = useRef(q);
  const setQ = (v: string) => {
    asked.current = v;
    void navigate({ search: v ? { q: v } : {}, replace: true });
  };
  const [text, setText] = useState(q);
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    if (q !== asked.current) {
      asked.current = q;
      setText(q);
    }
  }, [q]);

  // Searching waits for a pause in typing: one request per search, not per key.
  const search = useEffectEvent((v: string) => v !== asked.current && setQ(v));
  useEffect(() => {
    const t = setTimeout(() => search(text.trim()), SEARCH_DELAY);
    return () => clearTimeout(t);
  }, [text]);

  const list = useInfiniteQuery({
    queryKey: keys.walletList(q),
    queryFn: ({ pageParam }) => listAgents(q, pageParam),
    ...cursorPages,
  });
  const items = list.data ? list.data.pages.flatMap((p) => p.agents) : null;
  const error = list.error ? errorText(list.error) : '';
  const hasMore = list.hasNextPage;
  // One "more" at a time: a double click asks once.
  const more = () => !list.isFetchingNextPage && list.fetchNextPage();

  return (
    <main className="page">
      <h1>Wallets</h1>
      {owner &&
        (creating ? (
          <CreateWallet onClose={() => setCreating(false)} />
        ) : (
          <p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              New wallet…
            </button>
          </p>
        ))}
      <form
        className="filters"
        role="search"
        aria-label="Search wallets"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
        }}
      >
        <label htmlFor="wallet-search">Search</label>
        <input
          id="wallet-search"
          type="search"
          value={text}
          placeholder="label or address"
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => setText(e.target.value)}
          className="w-full max-w-md"
        />
      </form>
      {error && <p className="error">Could not load the wallets: {error}</p>}
      {items === null ? (
        !error && <SkeletonRows rows={3} height="h-20" />
      ) : items.length === 0 ? (
        q ? (
          <Empty title={`No wallet matches “${q}”.`}>Search by a wallet's label or by its address; clear the search to see every wallet.</Empty>
        ) : (
          <Empty title="No wallets yet.">
            {owner ? 'Create the first one with “New wallet…” above: ' : 'An owner creates them: '}each has its own address, balance and policy.
          </Empty>
        )
      ) : (
        <ul className="m-0 mb-4 grid list-none gap-2 p-0" aria-label="Wallets" aria-busy={q !== text.trim()}>
          {items.map((a) => (
            <li key={a.id} data-wallet={a.id} className="card grid grid-cols-1 gap-1 py-3">
              <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
                <Link to="/wallets/$id" params={{ id: a.id }} className="tap text-lg font-semibold wrap-anywhere">
                  {a.label}
                </Link>{' '}
                <StateBadge state={a.state} />
              </div>
              <code className="text-sm text-muted">
                <Middle text={a.pubkey} />
              </code>
              <span className="text-sm text-muted">{policySummary(a.policy)}</span>
            </li>
          ))}
        </ul>
      )}
      {hasMore && (
        <button type="button" className="btn" onClick={more}>
          More wallets
        </button>
      )}
    </main>
  );
}
