import { useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { balanceChart } from '../../charts';
import { ChartBox, useDark } from '../../components/ChartBox';
import { Empty } from '../../components/Empty';
import { Skeleton } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { amount, errorText, solAmount, when } from '../../format';
import { ALL, type Range, balanceHistoryQuery, instants, untouched } from '../../services/ledger';

/** RANGES are the spans people pick: each one's words. */
const RANGES: [Range, string][] = [
  ['days', 'Last 30 days'],
  ['hours', 'Last 48 hours'],
];

/** inUnits is an amount of an asset without its unit, as the balance shows it: SOL exactly, the others with cents. */
const inUnits = (n: number, asset: string) => (asset === 'SOL' ? solAmount(n) : amount(n));

/**
 * BalanceOverTime is the wallet's balance of an asset over the last 30
 * days (a point a day) or 48 hours (a point an hour), from its ledger: a
 * chart, and beside it the table of the same points, newest first. assets
 * are those people may pick (the network's, then SOL; USDC, the first,
 * shows until another is picked); "Every asset" draws a line each.
 */
export function BalanceOverTime({ id, assets }: { id: string; assets: string[] }) {
  const [range, setRange] = useState<Range>('days');
  const [asset, setAsset] = useState('USDC');
  const read = useQuery(balanceHistoryQuery(id, range, asset));
  const history = read.data ?? null;
  const error = read.error ? errorText(read.error) : '';
  const dark = useDark();
  const pick = useId();
  // What the shown answer is of (the previous one shows until the asked one comes).
  const every = history ? history.series.length > 1 : asset === ALL;
  const what = every ? 'every asset' : (history?.series[0]?.asset ?? asset);
  const at = history ? instants(history) : [];
  return (
    <section className="card mt-4" aria-labelledby="balance-over-time">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="balance-over-time" className="m-0">
          Balance over time
        </h2>
        <div className="flex flex-wrap items-center gap-2">
          <label htmlFor={pick}>Asset</label>
          <select id={pick} value={asset} onChange={(e) => setAsset(e.target.value)}>
            {assets.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
            <option value={ALL}>Every asset</option>
          </select>
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
      </div>
      {error && <p className="error">Could not load the balance over time: {error}</p>}
      {history === null ? (
        !error && <Skeleton lines={3} />
      ) : untouched(history) ? (
        <Empty title="Nothing in the ledger yet.">
          Each change of this wallet’s {every ? 'assets' : what} is recorded from the transaction that made it (deposits, sends and their fees); none
          left it a balance in this range.
        </Empty>
      ) : (
        <div className="pair mt-3">
          <ChartBox
            label={`${every ? 'Every asset' : what} of this wallet, ${history.interval === 'day' ? 'a point a day' : 'a point an hour'}`}
            height={240}
            build={balanceChart}
            data={history}
            dark={dark}
          />
          <div
            className="max-h-72 overflow-y-auto rounded-lg max-sm:w-full"
            tabIndex={0}
            role="region"
            aria-label={`Balance of ${what} at each point`}
          >
            <Table
              label={`Balance of ${what} at each point, newest first`}
              className="numbers w-full"
              columns={['At (UTC)', ...history.series.map((s) => ({ name: s.asset, num: true as const }))]}
            >
              {at
                .map((t, i) => (
                  <tr key={t.getTime()}>
                    <td>{when(t).replace(' UTC', '')}</td>
                    {history.series.map((s) => (
                      <td key={s.asset} className="num">
                        {s.points[i] ? inUnits(s.points[i].amount, s.asset) : '—'}
                      </td>
                    ))}
                  </tr>
                ))
                .reverse()}
            </Table>
          </div>
        </div>
      )}
    </section>
  );
}
