import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext } from '@tanstack/react-router';
import { Home } from '../pages/overview/Home';
import { Shell } from '../pages/shell/Shell';

/** RouterContext is what every route's beforeLoad and loader get: the query cache to warm. */
export type RouterContext = { queryClient: QueryClient };

export const Route = createRootRouteWithContext<RouterContext>()({
  component: Shell,
  // An unknown path shows the overview, as the dashboard's home.
  notFoundComponent: Home,
});
