import { type ReactNode, useMemo, useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { approvalsChart, blockedChart, colourOf, duration, receivedChart, spendChart, themeOf } from '../../charts';
import { ChartBox, useDark } from '../../components/ChartBox';
import { Form } from '../../components/Form';
import { SkeletonRows } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { amount, count, errorText, money, short, solAmount, usdc } from '../../format';
import { type Analytics, analyticsQuery } from '../../services/analytics';
import { walletLabelsQuery } from '../../services/wallets';

const route = getRouteApi('/analytics');

/**
 * SPEND_PHONE_ROW places a day's spend on a phone: the day and the amount,
 * the wallet and its transactions, the fees and the limit, then x402 beside MPP.
 */
const SPEND_PHONE_ROW = "max-sm:[grid-template-areas:'day_usdc'_'wallet_txs'_'fees_limit'_'x402_mpp']";

/** RECEIVED_PHONE_ROW places a day's deposits into a wallet on a phone: the day and the amount, the wallet and how many. */
const RECEIVED_PHONE_ROW = "max-sm:[grid-template-areas:'day_amount'_'wallet_deposits']";

/** OUTCOMES are the approvals table's columns after the day: each one's heading, and its number of a day. */
const OUTCOMES: [string, (a: Analytics['approvals'][number]) => string][] = [
  ['Approved', (a) => count(a.approved)],
  ['Rejected', (a) => count(a.rejected)],
  ['Expired', (a) => count(a.expired)],
  ['Median decision', (a) => duration(a.median_decision_seconds)],
];

/** AnalyticsPage charts the account's spend, deposits, approvals and blocks, each beside its table. */
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
      <Form className="card filters filters-2" onSubmit={() => setRange({ ...draft })}>
        <label>
          From <input type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </label>
        <label>
          To <input type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </label>
        <button type="submit" className="btn">
          Show
        </button>
      </Form>
      {error && <p className="error">Could not load analytics: {error}</p>}
      {data === null ? !error && <SkeletonRows rows={2} height="h-72" /> : <Report data={data} />}
    </main>
  );
}

/**
 * Figure is a section of the report: its heading and lead, then its chart
 * beside the table of the same numbers (children), or empty's notice when
 * the range has none.
 */
function Figure({ id, title, lead, empty, children }: { id: string; title: string; lead?: ReactNode; empty: string | false; children: ReactNode }) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {lead}
      {empty ? <p className="notice">{empty}</p> : <div className="pair">{children}</div>}
    </section>
  );
}

function Report({ data }: { data: Analytics }) {
  const dark = useDark();
  // The report names the wallets that spent; one that only received is
  // named from the wallets' list, read only then.
  const unnamed = data.received.some((r) => !data.wallets.some((w) => w.id === r.wallet_id));
  const { data: names = [] } = useQuery({ ...walletLabelsQuery(), enabled: unnamed });
  const label = new Map([...names, ...data.wallets].map((w) => [w.id, w.label]));
  // The table's swatches have the colours of the chart's wallets.
  const colour = useMemo(() => colourOf(data, themeOf(document.documentElement, dark)), [data, dark]);
  return (
    <>
      <Figure id="spend" title={`Spend per day, ${data.from} to ${data.to} (UTC)`} empty={data.spend.length === 0 && 'No sends in this range.'}>
        <ChartBox label="Spend per day, stacked by wallet" height={280} build={spendChart} data={data} dark={dark} />
        <Table
          label="Spend per day"
          className="numbers stack"
          columns={[
            'Day',
            'Wallet',
            { name: 'USDC', num: true },
            { name: 'Transactions', num: true },
            { name: 'Of which x402', num: true },
            { name: 'Of which MPP', num: true },
            { name: 'Fees (SOL)', num: true },
            { name: 'Daily limit', num: true },
          ]}
        >
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
                <td className="num max-sm:[grid-area:mpp]" data-testid="mpp" data-label="MPP">
                  {s.mpp_payments > 0 ? `${count(s.mpp_payments)} · ${usdc(s.mpp_amount_usdc)}` : '—'}
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
        </Table>
      </Figure>

      <Figure
        id="received"
        title="Received per day"
        lead={<p>Deposits into the wallets, confirmed on chain; the chart counts USDC, the table every asset.</p>}
        empty={data.received.length === 0 && 'Nothing received in this range.'}
      >
        <ChartBox label="USDC received per day" height={240} build={receivedChart} data={data} dark={dark} />
        <Table
          label="Received per day"
          className="numbers stack"
          columns={['Day', 'Wallet', { name: 'Received', num: true }, { name: 'Deposits', num: true }]}
        >
          {data.received.map((r) => (
            <tr key={r.day + r.wallet_id + r.asset} data-wallet={r.wallet_id} className={RECEIVED_PHONE_ROW}>
              <td className="max-sm:text-muted max-sm:[grid-area:day]">{r.day}</td>
              <td className="max-sm:font-medium max-sm:[grid-area:wallet]">{label.get(r.wallet_id) ?? short(r.wallet_id)}</td>
              <td className="num max-sm:font-semibold max-sm:[grid-area:amount]">{money(r.amount, r.asset)}</td>
              <td className="num max-sm:[grid-area:deposits]" data-label="Deposits">
                {count(r.deposits)}
              </td>
            </tr>
          ))}
        </Table>
      </Figure>

      <Figure
        id="approvals"
        title="Approvals by outcome"
        lead={
          <p>
            Median time to a decision: <strong data-testid="median">{duration(data.median_decision_seconds)}</strong>
          </p>
        }
        empty={data.approvals.length === 0 && 'No approvals decided in this range.'}
      >
        <ChartBox label="Approvals per day by outcome" height={240} build={approvalsChart} data={data} dark={dark} />
        <Table label="Approvals per day" className="numbers stack" columns={['Day', ...OUTCOMES.map(([name]) => ({ name, num: true as const }))]}>
          {data.approvals.map((a) => (
            <tr key={a.day} className="max-sm:flex max-sm:flex-wrap max-sm:gap-x-4">
              <td className="whitespace-nowrap max-sm:basis-full max-sm:text-muted">{a.day}</td>
              {OUTCOMES.map(([name, value]) => (
                <td key={name} className="num" data-label={name}>
                  {value(a)}
                </td>
              ))}
            </tr>
          ))}
        </Table>
      </Figure>

      <Figure id="blocked" title="Blocked sends by rule" empty={data.blocked.length === 0 && 'No sends blocked in this range.'}>
        <ChartBox label="Blocked sends by rule" height={Math.max(120, 48 + 32 * data.blocked.length)} build={blockedChart} data={data} dark={dark} />
        <Table label="Blocked sends by rule" className="numbers" columns={['Rule', { name: 'Sends', num: true }]}>
          {data.blocked.map((b) => (
            <tr key={b.reason}>
              <td>{b.reason}</td>
              <td className="num">{count(b.count)}</td>
            </tr>
          ))}
        </Table>
      </Figure>
    </>
  );
}
