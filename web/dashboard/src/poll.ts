import { useEffect, useState } from 'react';

/** POLL is how often the pages refresh what they show. */
export const POLL = 2000;

/**
 * usePoll loads now and every POLL ms while the component shows it (and
 * again when deps change); a failure keeps the last data and says why.
 */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: string; set: (v: T) => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let stop = false;
    const run = async () => {
      try {
        const v = await load();
        if (!stop) {
          setData(v);
          setError('');
        }
      } catch (e) {
        if (!stop) setError(e instanceof Error ? e.message : String(e));
      }
    };
    run();
    const t = setInterval(run, POLL);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, deps);
  return { data, error, set: setData };
}
