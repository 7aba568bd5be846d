// A list the API pages by cursor: the first page on each change of deps,
// more on demand. deps decide when the list starts over (fetchPage is new
// on every render).
import { useEffect, useRef, useState } from 'react';
import { errorText } from './format';

export type Page<T> = { items: T[]; next: string | null };

export function useCursorList<T>(fetchPage: (cursor?: string) => Promise<Page<T>>, deps: unknown[]) {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const fail = (e: unknown) => setError(errorText(e));
  // Which list is on screen: a page asked for by "more" before the list
  // started over (a new filter) belongs to the old one and is dropped.
  const generation = useRef(0);
  const loading = useRef(false); // one "more" at a time: a double click asks once

  useEffect(() => {
    let live = true;
    generation.current++;
    setItems(null);
    setCursor(null);
    setError('');
    fetchPage()
      .then((p) => live && (setItems(p.items), setCursor(p.next)))
      .catch((e) => live && fail(e));
    return () => {
      live = false;
    };
  }, deps);

  async function more() {
    if (!cursor || loading.current) return;
    const asked = generation.current;
    loading.current = true;
    try {
      const p = await fetchPage(cursor);
      if (asked !== generation.current) return;
      setItems((xs) => [...(xs ?? []), ...p.items]);
      setCursor(p.next);
    } catch (e) {
      if (asked === generation.current) fail(e);
    } finally {
      loading.current = false;
    }
  }

  return { items, error, more, hasMore: cursor !== null };
}
