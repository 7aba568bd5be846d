import { useEffect, useRef, useState } from 'react';
import { errorText } from './format';

/** POLL is how often the pages refresh what they show. */
export const POLL = 2000;

/**
 * usePoll loads now and every `every` ms (POLL by default) while the
 * component shows it and the tab is visible (and again when deps change,
 * or the tab shows again); a failure keeps the last data and says why.
 * Once done(data) holds it stops: what is final needs no more reads of the
 * per-user rate limit. set (an action's answer) wins over loads already
 * under way, which may have read before the action.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  deps: unknown[],
  opts: { every?: number; done?: (v: T) => boolean } = {},
): { data: T | null; error: string; set: (v: T) => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const generation = useRef(0);
  useEffect(() => {
    let stop = false;
    let finished = false;
    const run = async () => {
      if (finished || document.hidden) return;
      const g = generation.current;
      try {
        const v = await load();
        if (!stop && g === generation.current) {
          setData(v);
          setError('');
          finished = opts.done?.(v) ?? false;
        }
      } catch (e) {
        if (!stop) setError(errorText(e));
      }
    };
    run();
    const t = setInterval(run, opts.every ?? POLL);
    document.addEventListener('visibilitychange', run);
    return () => {
      stop = true;
      clearInterval(t);
      document.removeEventListener('visibilitychange', run);
    };
  }, deps);
  const set = (v: T) => {
    generation.current++;
    setData(v);
  };
  return { data, error, set };
}
