// Helpers of the component tests: a page rendered as the app renders it
// (under TanStack Router, here with a memory history, and the app's query
// cache), and a recorded stand-in for the API (fetch) that answers as the
// real one does. The browser tests (test/*.test.mjs) run the same pages
// against the real API.
import type { ReactNode } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import { Outlet, RouterProvider, createMemoryHistory, createRootRoute, createRoute, createRouter } from '@tanstack/react-router';
import { render } from '@testing-library/react';
import { vi } from 'vitest';
import { queryClient } from './services/queryClient';

/** Request is a call the page made: its method, path, JSON body and CSRF header. */
export type Request = { method: string; path: string; body: unknown; csrf: string | undefined };
/** Answer is the API's reply to a request: a status and a JSON body (none for 204). */
export type Answer = { status: number; body?: unknown };

/** recordedFetch stands in for fetch: it records each request and answers it with answer (which may wait). */
export function recordedFetch(answer: (r: Request) => Answer | Promise<Answer>): Request[] {
  const requests: Request[] = [];
  vi.stubGlobal('fetch', async (path: string, init: RequestInit = {}) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    const r = { method: init.method ?? 'GET', path, body: init.body ? JSON.parse(init.body as string) : undefined, csrf: headers['X-CSRF-Token'] };
    requests.push(r);
    const a = await answer(r);
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), { status: a.status, headers: { 'Content-Type': 'application/json' } });
  });
  return requests;
}

/**
 * renderRoute renders page at url, as the route of path (url itself unless
 * given), under a router with a memory history and the app's query cache,
 * emptied first. The router also has the home page ('/'), where the pages'
 * "back" links go; another path (where a page's link or action leads) is
 * "Not found".
 */
export function renderRoute(url: string, page: ReactNode, path: string = url.split('?')[0]) {
  queryClient.clear();
  const root = createRootRoute({ component: Outlet, notFoundComponent: () => <h1>Not found</h1> });
  const home = createRoute({ getParentRoute: () => root, path: '/', component: () => <h1>Home</h1> });
  const route = createRoute({ getParentRoute: () => root, path, component: () => page });
  const router = createRouter({ routeTree: root.addChildren([home, route]), history: createMemoryHistory({ initialEntries: [url] }) });
  const view = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { ...view, router };
}
