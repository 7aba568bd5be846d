import { useInfiniteQuery } from '@tanstack/react-query';
import { Address } from '../../components/Address';
import { Empty } from '../../components/Empty';
import { LoadMore, itemsOf } from '../../components/LoadMore';
import { Skeleton } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { count, errorText, explorer, money } from '../../format';
import { type BalanceDifference, balanceDifferencesQuery } from '../../services/ledger';

/** KINDS say what each kind of difference is. */
export const KINDS: Record<BalanceDifference['kind'], string> = {
  unexplained_outflow: 'Left in a transaction the service did not make',
  snapshot: 'Chain differs from ledger at the daily snapshot',
};

/** inAsset is an amount of a difference's asset with its unit; signed says a gain with +. */
const inAsset = (asset: BalanceDifference['asset'], n: number, signed = false) => (signed && n > 0 ? '+' : '') + money(n, asset);

/**
 * PHONE_ROW places a difference on a phone: what and how much, when and
 * its details, then the link.
 */
const PHONE_ROW = "max-sm:[grid-template-areas:'what_amount'_'details_details'_'when_links']";

/**
 * Differences is every change of the wallet's balance the service cannot
 * explain, newest first: money that left in a transaction it did not make,
 * and daily snapshots where the chain's balance was not the ledger's.
 */
export function Differences({ id, network }: { id: string; network: string }) {
  const list = useInfiniteQuery(balanceDifferencesQuery(id));
  const items = itemsOf(list);
  const error = list.error ? errorText(list.error) : '';
  return (
    <section className="card mt-4" aria-label="Differences">
      <h2>Differences</h2>
      {error && <p className="error">Could not load the differences: {error}</p>}
      {items === null ? (
        !error && <Skeleton lines={2} />
      ) : items.length === 0 ? (
        <Empty title="None: every change of this wallet’s balance is explained." />
      ) : (
        <Table label="Differences of this wallet's balance" columns={['When', 'What', { name: 'Amount', num: true }, 'Details', 'Links']}>
          {items.map((d) => (
            <tr key={d.id} data-kind={d.kind} className={PHONE_ROW}>
              <td className="max-sm:text-muted max-sm:[grid-area:when]">
                <Time at={d.at} />
              </td>
              <td className="max-sm:text-left max-sm:[grid-area:what]">{KINDS[d.kind]}</td>
              <td className="num font-semibold max-sm:[grid-area:amount]">{inAsset(d.asset, d.amount, true)}</td>
              <td className="max-sm:text-left max-sm:[grid-area:details]">
                {d.kind === 'snapshot' ? (
                  <>
                    chain {d.chain === null ? '—' : inAsset(d.asset, d.chain)}, ledger {d.ledger === null ? '—' : inAsset(d.asset, d.ledger)}
                  </>
                ) : (
                  <>
                    {d.to && (
                      <>
                        to <Address value={d.to} />{' '}
                      </>
                    )}
                    {d.signature && (
                      <>
                        in <Address value={d.signature} />
                      </>
                    )}
                  </>
                )}{' '}
                <small className="block text-muted">slot {count(d.slot)}</small>
              </td>
              <td className="max-sm:text-right max-sm:[grid-area:links]">
                {d.signature && (
                  <a href={explorer(d.signature, network)} target="_blank" rel="noreferrer" className="tap">
                    Explorer
                  </a>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <LoadMore list={list} className="btn mt-3">
        More differences
      </LoadMore>
    </section>
  );
}
