import type { ReactNode } from 'react';
import type { Page } from '../services/api';

/** Pager is how a list read page by page (useInfiniteQuery with cursorPages) reads its next page. */
type Pager = { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };

/** Paged is such a list with the pages read so far. */
type Paged<T> = Pager & { data?: { pages: Page<T>[] } };

/** itemsOf is a paged list's items so far, in order; null until its first page is read. */
export const itemsOf = <T,>(list: Paged<T>): T[] | null => (list.data ? list.data.pages.flatMap((p) => p.items) : null);

/**
 * LoadMore is the button that appends a paged list's next page, shown
 * while there is one. One page at a time: a double click asks once.
 */
export function LoadMore({ list, className = 'btn', children = 'Load more' }: { list: Pager; className?: string; children?: ReactNode }) {
  if (!list.hasNextPage) return null;
  return (
    <button type="button" className={className} onClick={() => !list.isFetchingNextPage && list.fetchNextPage()}>
      {children}
    </button>
  );
}
