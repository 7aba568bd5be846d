// A route's loader warms its page's reads: the page shows the answer
// without asking again; a list paged by cursor (dropped as soon as nothing
// shows it) waits for its page, and goes once the page is gone.
import { InfiniteQueryObserver, QueryObserver, infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { afterEach, expect, test, vi } from 'vitest';
import { cursorPages, queryClient, warm, warmList } from './queryClient';

afterEach(() => {
  queryClient.clear();
  vi.useRealTimers();
});

const list = (fetches: { n: number }) =>
  infiniteQueryOptions({
    queryKey: ['test-list'],
    queryFn: async () => {
      fetches.n++;
      return { items: [1, 2], nextCursor: null };
    },
    ...cursorPages,
  });

const settle = () => new Promise((r) => setTimeout(r, 5));

test('a warmed list waits for its page, which reads it without asking again, and goes when the page does', async () => {
  const fetches = { n: 0 };
  warmList(list(fetches));
  await settle();
  expect(fetches.n).toBe(1);
  expect(queryClient.getQueryData(['test-list'])).toBeTruthy(); // answered, no page yet: kept

  const page = new InfiniteQueryObserver(queryClient, list(fetches));
  const leave = page.subscribe(() => {});
  expect(page.getCurrentResult().data?.pages[0].items).toEqual([1, 2]);
  await settle();
  expect(fetches.n).toBe(1);

  leave();
  await settle();
  expect(queryClient.getQueryData(['test-list'])).toBeUndefined();
});

test('a warmed list its page never shows goes after a while', async () => {
  vi.useFakeTimers();
  const fetches = { n: 0 };
  warmList(list(fetches));
  await vi.advanceTimersByTimeAsync(9_000);
  expect(queryClient.getQueryData(['test-list'])).toBeTruthy();
  await vi.advanceTimersByTimeAsync(2_000);
  expect(queryClient.getQueryData(['test-list'])).toBeUndefined();
});

test('a list already shown is only warmed', async () => {
  const fetches = { n: 0 };
  const page = new InfiniteQueryObserver(queryClient, list(fetches));
  const leave = page.subscribe(() => {});
  await settle();
  warmList(list(fetches));
  leave();
  await settle();
  expect(queryClient.getQueryData(['test-list'])).toBeUndefined();
});

test('a page shows the read its loader just warmed without asking again; later mounts read again, as before', async () => {
  let fetches = 0;
  const read = queryOptions({
    queryKey: ['test-read'],
    queryFn: async () => ++fetches,
  });
  warm(queryClient.ensureQueryData(read));
  await settle();
  const page = new QueryObserver(queryClient, read);
  const leave = page.subscribe(() => {});
  await settle();
  expect(fetches).toBe(1);
  // Answered while the page showed it: the next page reads it again (stale).
  await page.refetch();
  leave();
  const again = new QueryObserver(queryClient, read);
  const leaveAgain = again.subscribe(() => {});
  await settle();
  expect(fetches).toBe(3);
  leaveAgain();
});

test('a warmed read made stale before its page shows is read again', async () => {
  let fetches = 0;
  const read = queryOptions({ queryKey: ['test-read'], queryFn: async () => ++fetches });
  warm(queryClient.ensureQueryData(read));
  await settle();
  await queryClient.invalidateQueries({ queryKey: ['test-read'] });
  const leave = new QueryObserver(queryClient, read).subscribe(() => {});
  await settle();
  expect(fetches).toBe(2);
  leave();
});
