import { useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type Session, type Transaction, listTransactions, listWalletLabels } from './api';
import { errorText, explorer, short, sol, usdc } from './format';
import { Empty } from './components/Empty';
import { SkeletonRows } from './components/Skeleton';
import { Status } from './components/Status';
import { Time } from './components/Time';
import { cursorPages, keys } from './queries';

type Filter = { wallet_id: string; status: string; since: string; until: string };

/**
 * PHONE_ROW places a transaction's cells on a phone: who paid and how
 * much first, then to whom and how it went, the memo, the fee, and when
 * beside the links. Every cell stays; only its place changes.
 */
const PHONE_ROW = "max-sm:[grid-template-areas:'wallet_amount'_'to_status'_'memo_memo'_'fee_fee'_'when_links']";

/** TransactionsPage lists the account's transactions with filters, newest first. */
export function TransactionsPage({ session }: { session: Session }) {
  const { data: wallets = [] } = useQuery({ queryKey: keys.walletLabels, queryFn: listWalletLabels });
  // The filter is in the URL (?status=…&since=…): a link is the filtered list.
  const search = useSearch({ from: '/transactions' });
  const filter: Filter = { wallet_id: search.wallet_id ?? '', status: search.status ?? '', since: search.since ?? '', until: search.until ?? '' };
  const navigate = useNavigate({ from: '/transactions' });
  const [draft, setDraft] = useState<Filter>(filter);
  const filterKey = JSON.stringify(filter);
  // Back and forward change the filter: the form follows (set while
  // rendering, as React advises for state derived from a changed input).
  const [shown, setShown] = useState(filterKey);
  if (shown !== filterKey) {
    setShown(filterKey);
    setDraft(filter);
  }
  const setFilter = (f: Filter) =>
    navigate({
      search: {
        wallet_id: f.wallet_id || undefined,
        status: (f.status || undefined) as Transaction['status'] | undefined,
        since: f.since || undefined,
        until: f.until || undefined,
      },
    });

  // Days are UTC: since is the day's start, until the next day's start.
  const query = (f: Filter) => ({
    wallet_id: f.wallet_id,
    status: f.status,
    since: f.since ? `${f.since}T00:00:00Z` : '',
    until: f.until ? new Date(Date.parse(`${f.until}T00:00:00Z`) + 86400000).toISOString() : '',
  });

  const list = useInfiniteQuery({
    queryKey: keys.transactionList(query(filter)),
    queryFn: ({ pageParam }) => listTransactions(query(filter), pageParam),
    ...cursorPages,
  });
  const txs = list.data ? list.data.pages.flatMap((p) => p.transactions) : null;
  const error = list.error ? errorText(list.error) : '';
  const hasMore = list.hasNextPage;
  // One "more" at a time: a double click asks once.
  const more = () => !list.isFetchingNextPage && list.fetchNextPage();

  const name = new Map(wallets.map((w) => [w.id, w.label]));
  return (
    <main className="page">
      <h1>Transactions</h1>
      <form
        className="card filters filters-2"
        aria-label="Filter transactions"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ ...draft });
        }}
      >
        <label>
          Wallet{' '}
          <select value={draft.wallet_id} onChange={(e) => setDraft({ ...draft, wallet_id: e.target.value })}>
            <option value="">all</option>
            {wallets.map((w) => (
              <option key={w.id} value={w.id}>
                {w.label} ({w.id.slice(0, 8)})
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.target.value })}>
            <option value="">any</option>
            <option>pending</option>
            <option>confirmed</option>
            <option>failed</option>
          </select>
        </label>
        <label>
          Since <input type="date" value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.target.value })} />
        </label>
        <label>
          Until <input type="date" value={draft.until} onChange={(e) => setDraft({ ...draft, until: e.target.value })} />
        </label>
        <button type="submit" className="btn">
          Filter
        </button>
      </form>
      {error && <p className="error">Could not load transactions: {error}</p>}
      {txs === null ? (
        !error && <SkeletonRows rows={4} height="h-10" />
      ) : txs.length === 0 ? (
        <Empty title="No transactions.">
          {Object.values(filter).some(Boolean)
            ? 'Nothing matches these filters: widen the dates or pick “any” status.'
            : 'Payments your agents send are listed here, newest first.'}
        </Empty>
      ) : (
        <table className="table" aria-label="Transactions">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Wallet</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col" className="num">
                Network fee
              </th>
              <th scope="col">To</th>
              <th scope="col">Memo</th>
              <th scope="col">Status</th>
              <th scope="col">Links</th>
            </tr>
          </thead>
          <tbody>
            {txs.map((t) => (
              <tr key={t.id} data-signature={t.signature} className={PHONE_ROW}>
                <td className="max-sm:self-center max-sm:text-muted max-sm:[grid-area:when]">
                  <Time iso={t.created_at} />
                </td>
                <td className="max-sm:text-left max-sm:font-semibold max-sm:[grid-area:wallet]">{name.get(t.wallet_id) ?? short(t.wallet_id)}</td>
                <td className="num font-semibold max-sm:text-base max-sm:[grid-area:amount]">{usdc(t.amount)}</td>
                <td className="num max-sm:text-left max-sm:text-muted max-sm:[grid-area:fee]" data-label="Network fee">
                  {t.fee_lamports == null ? '—' : sol(t.fee_lamports)}
                </td>
                <td className="max-sm:[grid-area:to]">
                  <span className="max-sm:text-muted">
                    <span className="sm:hidden">to </span>
                    <code title={t.counterparty} className="whitespace-nowrap">
                      {short(t.counterparty)}
                    </code>
                  </span>
                  {t.kind === 'x402' && (
                    <div data-testid="x402-resource">
                      {/* The seller's URL, shown as text: it is not ours to link. */}
                      <small title={t.resource ?? ''}>x402 · {t.resource ?? 'a paid resource'}</small>
                    </div>
                  )}
                </td>
                <td className="max-sm:[grid-area:memo] max-sm:empty:hidden">
                  {t.memo ? <span className="max-sm:before:content-['“'] max-sm:after:content-['”']">{t.memo}</span> : ''}
                </td>
                <td className="max-sm:text-right max-sm:[grid-area:status]">
                  <TxStatus status={t.status} />
                  {t.attempts > 1 && (
                    <small title={`Signed again after expiry; earlier signatures: ${t.previous_signatures.join(', ')}`}>
                      {' '}
                      ({t.attempts} attempts)
                    </small>
                  )}
                </td>
                <td className="max-sm:text-right max-sm:[grid-area:links]">
                  <TxLinks t={t} network={session.network} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {hasMore && (
        <button type="button" className="btn mt-3" onClick={more}>
          Load more
        </button>
      )}
    </main>
  );
}

/** TxStatus is a transaction's status as a badge. */
export function TxStatus({ status }: { status: Transaction['status'] }) {
  return <Status status={status} />;
}

/** TxLinks links a transaction on the explorer, and to the approval it came from. */
export function TxLinks({ t, network }: { t: Transaction; network: string }) {
  return (
    <>
      <a href={explorer(t.signature, network)} target="_blank" rel="noreferrer" className="tap">
        Explorer
      </a>
      {t.approval_id && (
        <>
          {' · '}
          <Link to="/approvals/$id" params={{ id: t.approval_id }} className="tap">
            Approval
          </Link>
        </>
      )}
    </>
  );
}
