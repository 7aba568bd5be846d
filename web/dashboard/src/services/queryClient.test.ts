// warmList: a route's loader warms a list paged by cursor before its page
// shows it; the list (dropped as soon as nothing shows it) must wait for
// the page, and go once the page is gone.
import { InfiniteQueryObserver, infiniteQueryOptions } from '@tanstack/react-query';
import { afterEach, expect, test, vi } from 'vitest';
import { cursorPages, queryClient, warmList } from './queryClient';

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

  const page = new InfiniteQueryObserver(queryClient, { ...list(fetches), refetchOnMount: false });
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
