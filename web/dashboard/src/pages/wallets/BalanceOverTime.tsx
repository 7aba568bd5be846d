import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { balanceChart } from '../../charts';
import { ChartBox, useDark } from '../../components/ChartBox';
import { Empty } from '../../components/Empty';
import { Skeleton } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { amount, errorText, solAmount, when } from '../../format';
import { type Range, balanceHistoryQuery, untouched } from '../../services/ledger';

/** RANGES are the spans people pick: each one's words. */
const RANGES: [Range, string][] = [
  ['days', 'Last 30 days'],
  ['hours', 'Last 48 hours'],
];

/**
 * BalanceOverTime is the wallet's USDC and SOL over the last 30 days (a
 * point a day) or 48 hours (a point an hour), from its ledger: a chart,
 * and below it the table of the same points, newest first.
 */
export function BalanceOverTime({ id }: { id: string }) {
  const [range, setRange] = useState<Range>('days');
  const read = useQuery(balanceHistoryQuery(id, range));
  const history = read.data ?? null;
  const error = read.error ? errorText(read.error) : '';
  const dark = useDark();
  return (
    <section className="card mt-4" aria-labelledby="balance-over-time">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="balance-over-time" className="m-0">
          Balance over time
        </h2>
        <div role="group" aria-label="Range" className="flex gap-2">
          {RANGES.map(([r, words]) => (
            <button
              key={r}
              type="button"
              className="btn btn-sm aria-pressed:border-accent aria-pressed:bg-accent aria-pressed:text-on-accent aria-pressed:hover:bg-accent"
              aria-pressed={range === r}
              onClick={() => setRange(r)}
            >
              {words}
            </button>
          ))}
        </div>
      </div>
      {error && <p className="error">Could not load the balance over time: {error}</p>}
      {history === null ? (
        !error && <Skeleton lines={3} />
      ) : untouched(history) ? (
        <Empty title="Nothing in the ledger yet.">
          Each change of this wallet’s USDC and SOL is recorded from the transaction that made it (deposits, sends and their fees); none left it a
          balance in this range.
        </Empty>
      ) : (
        <div className="pair mt-3">
          <ChartBox
            label={`USDC and SOL of this wallet, ${range === 'days' ? 'a point a day' : 'a point an hour'}`}
            height={240}
            build={balanceChart}
            data={history}
            dark={dark}
          />
          <div className="max-h-72 overflow-y-auto rounded-lg max-sm:w-full" tabIndex={0} role="region" aria-label="Balance at each point">
            <Table
              label="Balance at each point, newest first"
              className="numbers w-full"
              columns={['At (UTC)', { name: 'USDC', num: true }, { name: 'SOL', num: true }]}
            >
              {[...history.points].reverse().map((p) => (
                <tr key={p.at.getTime()}>
                  <td>{when(p.at).replace(' UTC', '')}</td>
                  <td className="num">{amount(p.usdc)}</td>
                  <td className="num">{solAmount(p.sol)}</td>
                </tr>
              ))}
            </Table>
          </div>
        </div>
      )}
    </section>
  );
}
