import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Address } from '../../components/Address';
import { Empty } from '../../components/Empty';
import { Form, useDraft } from '../../components/Form';
import { LoadMore, itemsOf } from '../../components/LoadMore';
import { SkeletonRows } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { TxLinks, TxStatus } from '../../components/TxLinks';
import { errorText, short, sol } from '../../format';
import type { Session } from '../../services/session';
import { type DayFilter, type TransactionStatus, moved, transactionsQuery } from '../../services/transactions';
import { walletLabelsQuery } from '../../services/wallets';
import { filterOf } from '../../routes/transactions.schema';

const route = getRouteApi('/transactions');

type Filter = DayFilter;

/**
 * PHONE_ROW places a transaction's cells on a phone: who paid and how
 * much first, then to whom and how it went, the memo, the fee, and when
 * beside the links. Every cell stays; only its place changes.
 */
const PHONE_ROW = "max-sm:[grid-template-areas:'wallet_amount'_'to_status'_'memo_memo'_'fee_fee'_'when_links']";

/** PROTOCOL names the 402 protocol a purchase was paid in, for the transactions of those kinds. */
const PROTOCOL = { x402: 'x402', mpp: 'MPP' } as const;

/** TransactionsPage lists the account's transactions with filters, newest first. */
export function TransactionsPage({ session }: { session: Session }) {
  const { data: wallets = [] } = useQuery(walletLabelsQuery());
  // The filter is in the URL (?status=…&since=…): a link is the filtered list.
  const search = route.useSearch();
  const filter: Filter = filterOf(search);
  const navigate = route.useNavigate();
  // Back and forward change the filter: the form follows.
  const [draft, setDraft] = useDraft(filter);
  const setFilter = (f: Filter) =>
    navigate({
      search: {
        wallet_id: f.wallet_id || undefined,
        status: (f.status || undefined) as TransactionStatus | undefined,
        since: f.since || undefined,
        until: f.until || undefined,
      },
    });

  // Days are UTC: the query asks from the since day's start to the until day's end.
  const list = useInfiniteQuery(transactionsQuery(filter));
  const txs = itemsOf(list);
  const error = list.error ? errorText(list.error) : '';

  const name = new Map(wallets.map((w) => [w.id, w.label]));
  return (
    <main className="page">
      <h1>Transactions</h1>
      <Form className="card filters filters-2" aria-label="Filter transactions" onSubmit={() => setFilter({ ...draft })}>
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
      </Form>
      {error && <p className="error">Could not load transactions: {error}</p>}
      {txs === null ? (
        !error && <SkeletonRows rows={4} height="h-10" />
      ) : txs.length === 0 ? (
        <Empty title="No transactions.">
          {Object.values(filter).some(Boolean)
            ? 'Nothing matches these filters: widen the dates or pick “any” status.'
            : 'Payments your agents send, and deposits into your wallets, are listed here, newest first.'}
        </Empty>
      ) : (
        <Table
          label="Transactions"
          columns={['When', 'Wallet', { name: 'Amount', num: true }, { name: 'Network fee', num: true }, 'To / from', 'Memo', 'Status', 'Links']}
        >
          {txs.map((t) => (
            <tr key={t.id} data-signature={t.signature} className={PHONE_ROW}>
              <td className="max-sm:self-center max-sm:text-muted max-sm:[grid-area:when]">
                <Time at={t.createdAt} />
              </td>
              <td className="max-sm:text-left max-sm:font-semibold max-sm:[grid-area:wallet]">{name.get(t.walletId) ?? short(t.walletId)}</td>
              <td className="num font-semibold max-sm:text-base max-sm:[grid-area:amount]">{moved(t)}</td>
              <td className="num max-sm:text-left max-sm:text-muted max-sm:[grid-area:fee]" data-label="Network fee">
                {t.feeLamports == null ? '—' : sol(t.feeLamports)}
              </td>
              <td className="max-sm:[grid-area:to]">
                <span className="max-sm:text-muted">
                  <span className={t.direction === 'receive' ? '' : 'sm:hidden'}>{t.direction === 'receive' ? 'from ' : 'to '}</span>
                  <Address value={t.counterparty} />
                </span>
                {t.belowMinimum && (
                  <div data-testid="below-minimum">
                    <small title="Below the account's deposit minimum: recorded, not announced to webhook endpoints">below minimum</small>
                  </div>
                )}
                {(t.kind === 'x402' || t.kind === 'mpp') && (
                  <div data-testid={`${t.kind}-resource`}>
                    {/* The seller's URL, shown as text: it is not ours to link. */}
                    <small title={t.resource ?? ''}>
                      {PROTOCOL[t.kind]} · {t.resource ?? 'a paid resource'}
                    </small>
                  </div>
                )}
              </td>
              <td className="max-sm:[grid-area:memo] max-sm:empty:hidden">
                {t.memo ? <span className="max-sm:before:content-['“'] max-sm:after:content-['”']">{t.memo}</span> : ''}
              </td>
              <td className="max-sm:text-right max-sm:[grid-area:status]">
                <TxStatus status={t.status} />
                {t.attempts > 1 && (
                  <small title={`Signed again after expiry; earlier signatures: ${t.previousSignatures.join(', ')}`}> ({t.attempts} attempts)</small>
                )}
              </td>
              <td className="max-sm:text-right max-sm:[grid-area:links]">
                <TxLinks t={t} network={session.network} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <LoadMore list={list} className="btn mt-3" />
    </main>
  );
}
