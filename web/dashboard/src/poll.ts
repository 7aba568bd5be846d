import { useEffect, useState } from 'react';

/** POLL is how often the pages refresh what they show. */
export const POLL = 2000;

/**
 * usePoll loads now and every POLL ms while the component shows it and the
 * tab is visible (and again when deps change, or the tab shows again); a
 * failure keeps the last data and says why. Once done(data) holds it
 * stops: what is final needs no more reads of the per-user rate limit.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  deps: unknown[],
  done?: (v: T) => boolean,
): { data: T | null; error: string; set: (v: T) => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let stop = false;
    let finished = false;
    const run = async () => {
      if (finished || document.hidden) return;
      try {
        const v = await load();
        if (!stop) {
          setData(v);
          setError('');
          finished = done?.(v) ?? false;
        }
      } catch (e) {
        if (!stop) setError(e instanceof Error ? e.message : String(e));
      }
    };
    run();
    const t = setInterval(run, POLL);
    document.addEventListener('visibilitychange', run);
    return () => {
      stop = true;
      clearInterval(t);
      document.removeEventListener('visibilitychange', run);
    };
  }, deps);
  return { data, error, set: setData };
}
