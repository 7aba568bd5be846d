// The dashboard's charts (Chart.js): the analytics page's and a wallet's
// balance over time. The parts registered (only those drawn, so the rest
// is left out of the bundle), the colours taken from the page's CSS custom
// properties (so a theme, dark mode among them, colours them too), and the
// pure builders of each chart's configuration from the API's answer.
// Every chart sits beside a table of the same numbers.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  type ChartDataset,
  type ChartType,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
  type TooltipItem,
} from 'chart.js';
import type { Analytics } from './services/analytics';
import { type BalanceHistory, instants } from './services/ledger';
import { money, usdc, when } from './format';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Legend, Tooltip);

/** Theme is what a chart is drawn with: its series' colours and the colours and font of its text and grid. */
export interface Theme {
  series: string[];
  approved: string;
  rejected: string;
  expired: string;
  blocked: string;
  text: string;
  grid: string;
  font: string;
}

// The colours when the page defines none (--chart-1 … --chart-8 and the
// rest): dark enough on a light background, light enough on a dark one.
const LIGHT = {
  series: ['#0b57d0', '#2e7d32', '#b3261e', '#7a4100', '#6a1b9a', '#00838f', '#5d4037', '#455a64'],
  approved: '#2e7d32',
  rejected: '#b3261e',
  expired: '#757575',
  blocked: '#b3261e',
};
const DARK = {
  series: ['#8ab4f8', '#81c995', '#f28b82', '#fcad70', '#c58af9', '#78d9ec', '#bcaaa4', '#b0bec5'],
  approved: '#81c995',
  rejected: '#f28b82',
  expired: '#9e9e9e',
  blocked: '#f28b82',
};

/** DARK_QUERY is the system's dark setting, which the page's colours follow. */
export const DARK_QUERY = '(prefers-color-scheme: dark)';

/**
 * themeOf reads a chart's colours where it is drawn: each CSS custom
 * property (--chart-1 … --chart-8, --chart-approved, --chart-rejected,
 * --chart-expired, --chart-blocked, --chart-text, --chart-grid) when the
 * page sets it, else a fallback for the light or dark scheme; the text
 * colour and font default to the element's own.
 */
export function themeOf(el: Element, dark: boolean): Theme {
  const css = getComputedStyle(el);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const base = dark ? DARK : LIGHT;
  const text = v('--chart-text', css.color || (dark ? '#e3e3e3' : '#1b1f24'));
  return {
    series: base.series.map((c, i) => v(`--chart-${i + 1}`, c)),
    approved: v('--chart-approved', base.approved),
    rejected: v('--chart-rejected', base.rejected),
    expired: v('--chart-expired', base.expired),
    blocked: v('--chart-blocked', base.blocked),
    text,
    grid: v('--chart-grid', dark ? 'rgba(255, 255, 255, 0.14)' : 'rgba(0, 0, 0, 0.1)'),
    font: css.fontFamily || 'system-ui, sans-serif',
  };
}

/** days is every UTC day from from to to (YYYY-MM-DD, both included), so quiet days show as gaps. */
export function days(from: string, to: string): string[] {
  const out: string[] = [];
  const end = Date.parse(to + 'T00:00:00Z');
  for (let t = Date.parse(from + 'T00:00:00Z'); t <= end && out.length < 1000; t += 86400000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/** duration says a number of seconds as people read it: 45 s, 12 min, 2.5 h; a dash for none. */
export function duration(s: number | null): string {
  if (s === null) return '—';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** colourOf gives each wallet of the report its series colour, in the report's order. */
export function colourOf(data: Analytics, t: Theme): Map<string, string> {
  return new Map(data.wallets.map((w, i) => [w.id, t.series[i % t.series.length]]));
}

/** base is what every chart shares: sized by its box, no motion, the theme's text, grid and font. */
function base(t: Theme, legend: boolean) {
  const font = { family: t.font, size: 12 };
  const axis = { ticks: { color: t.text, font }, grid: { color: t.grid }, border: { color: t.grid } };
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false as const,
    interaction: { mode: 'index' as const, intersect: false },
    plugins: {
      legend: { display: legend, position: 'bottom' as const, labels: { color: t.text, font, boxWidth: 12, boxHeight: 12, usePointStyle: true } },
      tooltip: { titleFont: font, bodyFont: font },
    },
    axis,
  };
}

/** dayAxis is a stacked axis of days, each tick the month and day (04-30; the tooltip has the whole day), as many as fit. */
function dayAxis(axis: ReturnType<typeof base>['axis'], labels: string[]) {
  return {
    ...axis,
    stacked: true,
    ticks: { ...axis.ticks, maxRotation: 0, autoSkipPadding: 12, callback: (v: string | number) => labels[Number(v)]?.slice(5) ?? '' },
  };
}

/**
 * dayScales are the scales of a chart of days: the days across, and up a
 * stacked axis from zero with its title (and ticks, when given, over the
 * axis's own).
 */
function dayScales(axis: ReturnType<typeof base>['axis'], labels: string[], t: Theme, title: string, ticks: { precision?: number } = {}) {
  return {
    x: dayAxis(axis, labels),
    y: {
      ...axis,
      stacked: true,
      beginAtZero: true,
      ticks: { ...axis.ticks, ...ticks },
      title: { display: true, text: title, color: t.text, font: axis.ticks.font },
    },
  };
}

/**
 * spendChart stacks each day's spend by wallet, with each wallet's daily
 * limit as a dashed line of its colour.
 */
export function spendChart(data: Analytics, t: Theme): ChartConfiguration<'bar' | 'line', (number | null)[], string> {
  const labels = days(data.from, data.to);
  const colour = colourOf(data, t);
  const amount = new Map(data.spend.map((s) => [`${s.day} ${s.wallet_id}`, s.amount_usdc]));
  const bars: ChartDataset<'bar' | 'line', (number | null)[]>[] = data.wallets.map((w) => ({
    type: 'bar',
    label: w.label,
    data: labels.map((d) => amount.get(`${d} ${w.id}`) ?? null),
    backgroundColor: colour.get(w.id),
    pointStyle: 'rect',
    stack: 'spend',
    maxBarThickness: 40,
  }));
  const limits: ChartDataset<'bar' | 'line', (number | null)[]>[] = data.wallets.map((w) => ({
    type: 'line',
    label: `${w.label} daily limit`,
    data: labels.map(() => w.daily_limit_usdc),
    borderColor: colour.get(w.id),
    backgroundColor: colour.get(w.id),
    borderDash: [5, 4],
    borderWidth: 1.5,
    // In the legend, a dashed line, as drawn.
    pointStyle: 'line',
    pointRadius: 0,
    pointHoverRadius: 0,
    // Its own stack: a limit is not added to the spend or the other limits.
    stack: `limit ${w.id}`,
  }));
  const { axis, ...common } = base(t, true);
  return {
    type: 'bar',
    data: { labels, datasets: [...bars, ...limits] },
    options: {
      ...common,
      scales: dayScales(axis, labels, t, 'USDC'),
      plugins: {
        ...common.plugins,
        tooltip: {
          ...common.plugins.tooltip,
          // A day's tooltip lists the wallets that sent, then the limits.
          filter: (item: TooltipItem<'bar' | 'line'>) => item.raw !== null,
          callbacks: { label: (item: TooltipItem<'bar' | 'line'>) => `${item.dataset.label}: ${usdc(item.raw as number)}` },
        },
      },
    },
  };
}

/** approvalsChart stacks each day's decided approvals by outcome. */
export function approvalsChart(data: Analytics, t: Theme): ChartConfiguration<'bar', number[], string> {
  const labels = days(data.from, data.to);
  const byDay = new Map(data.approvals.map((a) => [a.day, a]));
  const outcome = (label: string, colour: string, n: (a: Analytics['approvals'][number]) => number): ChartDataset<'bar', number[]> => ({
    label,
    data: labels.map((d) => {
      const a = byDay.get(d);
      return a ? n(a) : 0;
    }),
    backgroundColor: colour,
    pointStyle: 'rect',
    stack: 'outcome',
    maxBarThickness: 40,
  });
  const { axis, ...common } = base(t, true);
  return {
    type: 'bar',
    data: {
      labels,
      datasets: [
        outcome('Approved', t.approved, (a) => a.approved),
        outcome('Rejected', t.rejected, (a) => a.rejected),
        outcome('Expired', t.expired, (a) => a.expired),
      ],
    },
    options: {
      ...common,
      scales: dayScales(axis, labels, t, 'Approvals', { precision: 0 }),
      plugins: {
        ...common.plugins,
        tooltip: { ...common.plugins.tooltip, filter: (item: TooltipItem<'bar'>) => item.raw !== 0 },
      },
    },
  };
}

/** blockedChart is a bar per rule that blocked sends, most first. */
export function blockedChart(data: Analytics, t: Theme): ChartConfiguration<'bar', number[], string> {
  const { axis, ...common } = base(t, false);
  return {
    type: 'bar',
    data: {
      labels: data.blocked.map((r) => r.reason),
      datasets: [{ label: 'Blocked sends', data: data.blocked.map((r) => r.count), backgroundColor: t.blocked, maxBarThickness: 28 }],
    },
    options: {
      ...common,
      indexAxis: 'y',
      scales: {
        x: { ...axis, beginAtZero: true, ticks: { ...axis.ticks, precision: 0 } },
        y: axis,
      },
    },
  };
}

/**
 * receivedChart is the USDC that came into the account's wallets each day
 * (every wallet together: the table beside it has each wallet's).
 */
export function receivedChart(data: Analytics, t: Theme): ChartConfiguration<'bar', number[], string> {
  const labels = days(data.from, data.to);
  const byDay = new Map<string, number>();
  for (const r of data.received) if (r.asset.toUpperCase() === 'USDC') byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.amount);
  const { axis, ...common } = base(t, false);
  return {
    type: 'bar',
    data: {
      labels,
      datasets: [{ label: 'Received', data: labels.map((d) => byDay.get(d) ?? 0), backgroundColor: t.series[1], maxBarThickness: 40 }],
    },
    options: {
      ...common,
      scales: dayScales(axis, labels, t, 'USDC'),
      plugins: {
        ...common.plugins,
        tooltip: {
          ...common.plugins.tooltip,
          filter: (item: TooltipItem<'bar'>) => item.raw !== 0,
          callbacks: { label: (item: TooltipItem<'bar'>) => `Received: ${usdc(item.raw as number)}` },
        },
      },
    },
  };
}

/** tick is a point's time on the axis, in UTC as the table's: the month and day of a day's, the hour and minute of an hour's. */
export const tick = (at: Date, interval: BalanceHistory['interval']): string =>
  interval === 'day' ? at.toISOString().slice(5, 10) : at.toISOString().slice(11, 16);

/**
 * balanceChart is a wallet's balance over time: a line per series. One
 * asset's line is on an axis of its own; with several, the stablecoins
 * share the left axis and SOL (fees, far smaller) is a dashed line on the
 * right one. Every axis starts at zero.
 */
export function balanceChart(h: BalanceHistory, t: Theme): ChartConfiguration<'line', number[], string> {
  const labels = instants(h).map((at) => tick(at, h.interval));
  const { axis, ...common } = base(t, h.series.length > 1);
  const title = (text: string) => ({ display: true, text, color: t.text, font: axis.ticks.font });
  const alone = h.series.length === 1;
  const sol = !alone && h.series.some((s) => s.asset === 'SOL');
  const datasets: ChartDataset<'line', number[]>[] = h.series.map((s, i) => {
    const onSol = sol && s.asset === 'SOL';
    const colour = t.series[i % t.series.length];
    return {
      label: s.asset,
      data: s.points.map((p) => p.amount),
      yAxisID: onSol ? 'sol' : 'y',
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: onSol ? 1.5 : 2,
      ...(onSol ? { borderDash: [5, 4] } : {}),
      pointRadius: 0,
      pointHitRadius: 8,
      pointStyle: 'line',
    };
  });
  return {
    type: 'line',
    data: { labels, datasets },
    options: {
      ...common,
      scales: {
        x: { ...axis, ticks: { ...axis.ticks, maxRotation: 0, autoSkipPadding: 12 } },
        y: { ...axis, beginAtZero: true, title: title(alone ? h.series[0].asset : 'Stablecoins') },
        ...(sol
          ? { sol: { ...axis, position: 'right' as const, beginAtZero: true, grid: { ...axis.grid, drawOnChartArea: false }, title: title('SOL') } }
          : {}),
      },
      plugins: {
        ...common.plugins,
        tooltip: {
          ...common.plugins.tooltip,
          callbacks: {
            // The exact time; the axis has only its day or hour.
            title: (items: TooltipItem<'line'>[]) => (items.length ? when(instants(h)[items[0].dataIndex]) : ''),
            label: (item: TooltipItem<'line'>) => money(item.raw as number, item.dataset.label ?? ''),
          },
        },
      },
    },
  };
}

/** Builder is one of the charts: its configuration from what it draws (an analytics report unless said), in a theme's colours. */
export type Builder<T extends ChartType, D, In = Analytics> = (data: In, t: Theme) => ChartConfiguration<T, D, string>;

export { Chart };
