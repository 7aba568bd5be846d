import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type Analytics, getAnalytics } from './api';
import { errorText, usdc } from './format';
import { keys } from './queries';

const COLORS = ['#0b57d0', '#2e7d32', '#b3261e', '#7a4100', '#6a1b9a', '#00838f', '#5d4037', '#455a64'];

function duration(s: number | null): string {
  if (s === null) return '—';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

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

function Report({ data }: { data: Analytics }) {
  const label = new Map(data.wallets.map((w) => [w.id, w.label]));
  const color = new Map(data.wallets.map((w, i) => [w.id, COLORS[i % COLORS.length]]));
  // Every day of the range gets its slot, so quiet days show as gaps.
  const days: string[] = [];
  for (let t = Date.parse(data.from + 'T00:00:00Z'); t <= Date.parse(data.to + 'T00:00:00Z'); t += 86400000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  const max = Math.max(
    1,
    ...days.map((d) => data.spend.filter((s) => s.day === d).reduce((n, s) => n + s.amount_usdc, 0)),
    ...data.wallets.map((w) => w.daily_limit_usdc),
  );
  const W = 600;
  const H = 160;
  const slot = W / days.length;
  const bw = Math.max(1, slot * 0.7);
  const every = Math.ceil(days.length / 8); // at most ~8 day labels
  const y = (v: number) => H - (v / max) * H;
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
            <svg role="img" aria-label="Spend per day, stacked by wallet" viewBox={`0 0 ${W} ${H + 20}`} className="chart">
              {data.wallets.map((w) => (
                <line key={w.id} x1="0" x2={W} y1={y(w.daily_limit_usdc)} y2={y(w.daily_limit_usdc)} stroke={color.get(w.id)} strokeDasharray="4 3">
                  <title>{`${w.label}: daily limit ${usdc(w.daily_limit_usdc)}`}</title>
                </line>
              ))}
              {days.map((d, i) => {
                let top = H;
                return (
                  <g key={d}>
                    {data.spend
                      .filter((s) => s.day === d)
                      .map((s) => {
                        const h = (s.amount_usdc / max) * H;
                        top -= h;
                        return (
                          <rect key={s.wallet_id} x={i * slot + (slot - bw) / 2} y={top} width={bw} height={h} fill={color.get(s.wallet_id)}>
                            <title>{`${d} ${label.get(s.wallet_id)}: ${usdc(s.amount_usdc)}`}</title>
                          </rect>
                        );
                      })}
                    {(i % every === 0 || (i === days.length - 1 && i % every > every / 2)) && (
                      <text
                        x={i === 0 ? 0 : i === days.length - 1 ? W : i * slot + slot / 2}
                        y={H + 14}
                        textAnchor={i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle'}
                        fontSize="11"
                      >
                        {d.slice(5)}
                      </text>
                    )}
                  </g>
                );
              })}
            </svg>
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
                      <span className="swatch" style={{ background: color.get(s.wallet_id) }} /> {label.get(s.wallet_id)}
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
            <div className="bars" role="img" aria-label="Approvals per day by outcome">
              {data.approvals.map((a) => {
                const n = Math.max(1, a.approved + a.rejected + a.expired);
                return (
                  <div key={a.day} className="hbar" title={`${a.day}: ${a.approved} approved, ${a.rejected} rejected, ${a.expired} expired`}>
                    <span>{a.day.slice(5)}</span>
                    <div>
                      <i className="approved" style={{ width: `${(a.approved / n) * 100}%` }} />
                      <i className="rejected" style={{ width: `${(a.rejected / n) * 100}%` }} />
                      <i className="expired" style={{ width: `${(a.expired / n) * 100}%` }} />
                    </div>
                  </div>
                );
              })}
            </div>
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
          <table className="numbers" aria-label="Blocked sends by rule">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Sends</th>
                <th scope="col" aria-hidden="true" />
              </tr>
            </thead>
            <tbody>
              {data.blocked.map((b) => (
                <tr key={b.reason}>
                  <td>{b.reason}</td>
                  <td>{b.count}</td>
                  <td aria-hidden="true">
                    <i className="meter" style={{ width: `${(b.count / data.blocked[0].count) * 8}rem` }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
