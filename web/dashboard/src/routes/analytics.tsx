import { createFileRoute } from '@tanstack/react-router';
import { AnalyticsPage } from '../pages/analytics/AnalyticsPage';
import { analyticsQuery } from '../services/analytics';
import { warm } from '../services/queryClient';
import { analyticsSearch } from './analytics.schema';

/** The account's spend, approvals and blocks over a range (?from=…&to=…), each chart beside its table. */
export const Route = createFileRoute('/analytics')({
  validateSearch: analyticsSearch,
  loaderDeps: ({ search }) => ({ from: search.from ?? '', to: search.to ?? '' }),
  beforeLoad: ({ search }) => ({ report: analyticsQuery(search.from ?? '', search.to ?? '') }),
  loader: ({ context: { queryClient, report } }) => warm(queryClient.ensureQueryData(report)),
  component: AnalyticsPage,
});
