// A list the API pages by cursor: the first page on each change of deps,
// more on demand. deps decide when the list starts over (fetchPage is new
// on every render).
import { useEffect, useState } from 'react';

export type Page<T> = { items: T[]; next: string | null };

export function useCursorList<T>(fetchPage: (cursor?: string) => Promise<Page<T>>, deps: unknown[]) {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const fail = (e: unknown) => setError(e instanceof Error ? e.message : String(e));

  useEffect(() => {
    let live = true;
    setItems(null);
    setError('');
    fetchPage()
      .then((p) => live && (setItems(p.items), setCursor(p.next)))
      .catch((e) => live && fail(e));
    return () => {
      live = false;
    };
  }, deps);

  async function more() {
    if (!cursor) return;
    try {
      const p = await fetchPage(cursor);
      setItems((xs) => [...(xs ?? []), ...p.items]);
      setCursor(p.next);
    } catch (e) {
      fail(e);
    }
  }

  return { items, error, more, hasMore: cursor !== null };
}
