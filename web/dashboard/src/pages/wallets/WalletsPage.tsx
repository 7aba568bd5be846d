import { useEffect, useEffectEvent, useRef, useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import { Empty } from '../../components/Empty';
import { Form } from '../../components/Form';
import { LoadMore, itemsOf } from '../../components/LoadMore';
import { Middle } from '../../components/Middle';
import { SkeletonRows } from '../../components/Skeleton';
import { errorText } from '../../format';
import type { Session } from '../../services/session';
import { walletsQuery } from '../../services/wallets';
import { CreateWallet } from './CreateWallet';
import { policySummary } from './policy/policySummary';
import { StateBadge } from './StateBadge';

const route = getRouteApi('/wallets/');

/** SEARCH_DELAY is how long typing must pause before the list is asked again. */
const SEARCH_DELAY = 300;

/** WalletsPage lists the account's wallets, searchable by label or address; owners create new ones. */
export function WalletsPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  // The search is in the URL (?q=…), replaced as one types: a link is the search.
  const q = route.useSearch().q ?? '';
  const navigate = route.useNavigate();
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

  const list = useInfiniteQuery(walletsQuery(q));
  const items = itemsOf(list);
  const error = list.error ? errorText(list.error) : '';

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
      <Form className="filters" role="search" aria-label="Search wallets" onSubmit={() => setQ(text.trim())}>
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
      </Form>
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
      <LoadMore list={list}>More wallets</LoadMore>
    </main>
  );
}
