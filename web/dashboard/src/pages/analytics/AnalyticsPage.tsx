import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import type { ChartType } from 'chart.js';
import { type Builder, Chart, DARK_QUERY, approvalsChart, blockedChart, colourOf, duration, spendChart, themeOf } from '../../charts';
import { SkeletonRows } from '../../components/Skeleton';
import { amount, count, errorText, solAmount, usdc } from '../../format';
import { type Analytics, analyticsQuery } from '../../services/analytics';

const route = getRouteApi('/analytics');

/**
 * SPEND_PHONE_ROW places a day's spend on a phone: the day and the amount,
 * the wallet and its transactions, the fees and the limit, then x402.
 */
const SPEND_PHONE_ROW = "max-sm:[grid-template-areas:'day_usdc'_'wallet_txs'_'fees_limit'_'x402_x402']";

/** AnalyticsPage charts the account's spend, approvals and blocks, each beside its table. */
export function AnalyticsPage() {
  // The range is in the URL (?from=…&to=…); none is the API's default (the last 30 days).
  const search = route.useSearch();
  const range = { from: search.from ?? '', to: search.to ?? '' };
  const navigate = route.useNavigate();
  const setRange = (r: { from: string; to: string }) => navigate({ search: { from: r.from || undefined, to: r.to || undefined } });
  const [draft, setDraft] = useState(range);
  // Another range's report stays shown until this one's arrives.
  const read = useQuery({ ...analyticsQuery(range.from, range.to), placeholderData: keepPreviousData });
  const data = read.data ?? null;
  const error = read.error ? errorText(read.error) : '';
  // The form shows the range the API answered for (its defaults filled in),
  // set while rendering when a new answer arrives.
  const [shown, setShown] = useState(data);
  if (data && data !== shown) {
    setShown(data);
    setDraft({ from: data.from, to: data.to });
  }

  return (
    <main className="page">
      <h1>Analytics</h1>
      <form
        className="card filters filters-2"
        onSubmit={(e) => {
          e.preventDefault();
          setRange({ ...draft });
        }}
      >
        <label>
          From <input type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </label>
        <label>
          To <input type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </label>
        <button type="submit" className="btn">
          Show
        </button>
      </form>
      {error && <p className="error">Could not load analytics: {error}</p>}
      {data === null ? !error && <SkeletonRows rows={2} height="h-72" /> : <Report data={data} />}
    </main>
  );
}

/** subscribeScheme calls back when the system's light or dark setting changes. */
function subscribeScheme(changed: () => void) {
  const m = matchMedia(DARK_QUERY);
  m.addEventListener('change', changed);
  return () => m.removeEventListener('change', changed);
}

/** useDark is the system's dark setting; the charts redraw in its colours when it changes. */
const useDark = () => useSyncExternalStore(subscribeScheme, () => matchMedia(DARK_QUERY).matches);

/**
 * ChartBox draws build's chart of data on a canvas sized by its box (the
 * chart follows the box's width). Screen readers read the table beside it,
 * which has the same numbers.
 */
function ChartBox<T extends ChartType, D>(props: { label: string; height: number; build: Builder<T, D>; data: Analytics; dark: boolean }) {
  const { label, height, build, data, dark } = props;
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart<T, D, string>(canvas.current, build(data, themeOf(canvas.current, dark)));
    return () => chart.destroy();
  }, [build, data, dark]);
  return (
    <div className="chart" style={{ position: 'relative', height }}>
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}: the table has its numbers.
      </canvas>
    </div>
  );
}

function Report({ data }: { data: Analytics }) {
  const dark = useDark();
  const label = new Map(data.wallets.map((w) => [w.id, w.label]));
  // The table's swatches have the colours of the chart's wallets.
  const colour = useMemo(() => colourOf(data, themeOf(document.documentElement, dark)), [data, dark]);
  return (
    <>
      <section aria-labelledby="spend">
        <h2 id="spend">
          Spend per day, {data.from} to {data.to} (UTC)
        </h2>
        {data.spend.length === 0 ? (
          <p className="notice">No sends in this range.</p>
        ) : (
          <div className="pair">
            <ChartBox label="Spend per day, stacked by wallet" height={280} build={spendChart} data={data} dark={dark} />
            <table className="numbers stack" aria-label="Spend per day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Wallet</th>
                  <th scope="col" className="num">
                    USDC
                  </th>
                  <th scope="col" className="num">
                    Transactions
                  </th>
                  <th scope="col" className="num">
                    Of which x402
                  </th>
                  <th scope="col" className="num">
                    Fees (SOL)
                  </th>
                  <th scope="col" className="num">
                    Daily limit
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.spend.map((s) => {
                  const limit = data.wallets.find((w) => w.id === s.wallet_id)?.daily_limit_usdc;
                  return (
                    <tr key={s.day + s.wallet_id} data-wallet={s.wallet_id} className={SPEND_PHONE_ROW}>
                      <td className="max-sm:text-muted max-sm:[grid-area:day]">{s.day}</td>
                      <td className="max-sm:font-medium max-sm:[grid-area:wallet]">
                        <span className="swatch" style={{ background: colour.get(s.wallet_id) }} /> {label.get(s.wallet_id)}
                      </td>
                      <td className="num max-sm:font-semibold max-sm:[grid-area:usdc] max-sm:after:content-['_USDC']">{amount(s.amount_usdc)}</td>
                      <td className="num max-sm:[grid-area:txs]" data-label="Transactions">
                        {count(s.transactions)}
                      </td>
                      <td className="num max-sm:text-left max-sm:[grid-area:x402]" data-testid="x402" data-label="x402">
                        {s.x402_payments > 0 ? `${count(s.x402_payments)} · ${usdc(s.x402_amount_usdc)}` : '—'}
                      </td>
                      <td className="num max-sm:text-left max-sm:[grid-area:fees] max-sm:after:content-['_SOL']" data-label="Fees">
                        {solAmount(s.fee_lamports / 1e9)}
                      </td>
                      <td className="num max-sm:[grid-area:limit]" data-label="Daily limit">
                        {limit === undefined ? '—' : amount(limit)}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="approvals">
        <h2 id="approvals">Approvals by outcome</h2>
        <p>
          Median time to a decision: <strong data-testid="median">{duration(data.median_decision_seconds)}</strong>
        </p>
        {data.approvals.length === 0 ? (
          <p className="notice">No approvals decided in this range.</p>
        ) : (
          <div className="pair">
            <ChartBox label="Approvals per day by outcome" height={240} build={approvalsChart} data={data} dark={dark} />
            <table className="numbers stack" aria-label="Approvals per day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" className="num">
                    Approved
                  </th>
                  <th scope="col" className="num">
                    Rejected
                  </th>
                  <th scope="col" className="num">
                    Expired
                  </th>
                  <th scope="col" className="num">
                    Median decision
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.approvals.map((a) => (
                  <tr key={a.day} className="max-sm:flex max-sm:flex-wrap max-sm:gap-x-4">
                    <td className="whitespace-nowrap max-sm:basis-full max-sm:text-muted">{a.day}</td>
                    <td className="num" data-label="Approved">
                      {count(a.approved)}
                    </td>
                    <td className="num" data-label="Rejected">
                      {count(a.rejected)}
                    </td>
                    <td className="num" data-label="Expired">
                      {count(a.expired)}
                    </td>
                    <td className="num" data-label="Median decision">
                      {duration(a.median_decision_seconds)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="blocked">
        <h2 id="blocked">Blocked sends by rule</h2>
        {data.blocked.length === 0 ? (
          <p className="notice">No sends blocked in this range.</p>
        ) : (
          <div className="pair">
            <ChartBox
              label="Blocked sends by rule"
              height={Math.max(120, 48 + 32 * data.blocked.length)}
              build={blockedChart}
              data={data}
              dark={dark}
            />
            <table className="numbers" aria-label="Blocked sends by rule">
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col" className="num">
                    Sends
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.blocked.map((b) => (
                  <tr key={b.reason}>
                    <td>{b.reason}</td>
                    <td className="num">{count(b.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
