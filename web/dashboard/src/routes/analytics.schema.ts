import { day } from '../search';

/** AnalyticsSearch is the report's range of UTC days; none is the API's default (the last 30 days). */
export type AnalyticsSearch = { from?: string; to?: string };

export const analyticsSearch = (s: Record<string, unknown>): AnalyticsSearch => ({ from: day(s.from), to: day(s.to) });
