// The router: the routes are files (src/routes, TanStack Router's file
// routes; the Vite plugin writes routeTree.gen.ts from them), served under
// /dashboard/ (where the api binary serves index.html for every path, so a
// deep link opens its page). Each route's loader warms the query cache.
import { createRouter } from '@tanstack/react-router';
import { routeTree } from './routeTree.gen';
import { queryClient } from './services/queryClient';
import { parseSearch, stringifySearch } from './search';

export const router = createRouter({
  routeTree,
  basepath: '/dashboard',
  context: { queryClient },
  parseSearch,
  stringifySearch,
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
