import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import type { ChartType } from 'chart.js';
import { type Analytics, getAnalytics } from './api';
import { type Builder, Chart, DARK_QUERY, approvalsChart, blockedChart, colourOf, duration, spendChart, themeOf } from './charts';
import { errorText } from './format';
import { keys } from './queries';

/** AnalyticsPage charts the account's spend, approvals and blocks, each beside its table. */
export function AnalyticsPage() {
  // The range is in the URL (?from=…&to=…); none is the API's default (the last 30 days).
  const search = useSearch({ from: '/analytics' });
  const range = { from: search.from ?? '', to: search.to ?? '' };
  const navigate = useNavigate({ from: '/analytics' });
  const setRange = (r: { from: string; to: string }) => navigate({ search: { from: r.from || undefined, to: r.to || undefined } });
  const [draft, setDraft] = useState(range);
  // Another range's report stays shown until this one's arrives.
  const read = useQuery({
    queryKey: keys.analytics(range.from, range.to),
    queryFn: () => getAnalytics(range.from, range.to),
    placeholderData: keepPreviousData,
  });
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
        className="card filters"
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
      {data === null ? !error && <p>Loading…</p> : <Report data={data} />}
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
            <table className="numbers" aria-label="Spend per day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Wallet</th>
                  <th scope="col">USDC</th>
                  <th scope="col">Transactions</th>
                  <th scope="col">Of which x402</th>
                  <th scope="col">Fees (SOL)</th>
                  <th scope="col">Daily limit</th>
                </tr>
              </thead>
              <tbody>
                {data.spend.map((s) => (
                  <tr key={s.day + s.wallet_id} data-wallet={s.wallet_id}>
                    <td>{s.day}</td>
                    <td>
                      <span className="swatch" style={{ background: colour.get(s.wallet_id) }} /> {label.get(s.wallet_id)}
                    </td>
                    <td>{s.amount_usdc}</td>
                    <td>{s.transactions}</td>
                    <td data-testid="x402">{s.x402_payments > 0 ? `${s.x402_payments} · ${s.x402_amount_usdc} USDC` : '—'}</td>
                    <td>{s.fee_lamports / 1e9}</td>
                    <td>{data.wallets.find((w) => w.id === s.wallet_id)?.daily_limit_usdc}</td>
                  </tr>
                ))}
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
            <table className="numbers" aria-label="Approvals per day">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Approved</th>
                  <th scope="col">Rejected</th>
                  <th scope="col">Expired</th>
                  <th scope="col">Median decision</th>
                </tr>
              </thead>
              <tbody>
                {data.approvals.map((a) => (
                  <tr key={a.day}>
                    <td>{a.day}</td>
                    <td>{a.approved}</td>
                    <td>{a.rejected}</td>
                    <td>{a.expired}</td>
                    <td>{duration(a.median_decision_seconds)}</td>
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
                  <th scope="col">Sends</th>
                </tr>
              </thead>
              <tbody>
                {data.blocked.map((b) => (
                  <tr key={b.reason}>
                    <td>{b.reason}</td>
                    <td>{b.count}</td>
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
