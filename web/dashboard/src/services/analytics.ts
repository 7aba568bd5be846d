// Analytics: the account's spend, decisions and blocked sends per UTC day,
// aggregated by the API (SQL), never computed here from every transaction.
//
// The report is figures keyed by UTC days (YYYY-MM-DD), read by the charts
// and their tables as the API names them: there is no timestamp to map.
import { queryOptions } from '@tanstack/react-query';
import { API, type Schemas, call } from './api';
import { poll } from './queryClient';

export type Analytics = Schemas['AnalyticsOutputBody'];

/** analyticsKeys.all is every range: the overview's spend today and the analytics page's. */
export const analyticsKeys = {
  all: ['analytics'] as const,
  range: (from: string, to: string) => ['analytics', from, to] as const,
};

/** getAnalytics is the report of the UTC days from to to ('' for the API's default: the last 30 days). */
export function getAnalytics(from: string, to: string, signal?: AbortSignal): Promise<Analytics> {
  const q = new URLSearchParams();
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  return call<Analytics>('GET', `${API}/analytics?${q}`, undefined, signal);
}

/** analyticsQuery is the analytics page's report of a range. */
export const analyticsQuery = (from: string, to: string) =>
  queryOptions({
    queryKey: analyticsKeys.range(from, to),
    queryFn: ({ signal }) => getAnalytics(from, to, signal),
  });

/** daySpendQuery is one UTC day's report (the overview's spend today), refreshed every ms. */
export const daySpendQuery = (day: string, ms: number) =>
  queryOptions({
    queryKey: analyticsKeys.range(day, day),
    queryFn: ({ signal }) => getAnalytics(day, day, signal),
    ...poll(ms),
  });
