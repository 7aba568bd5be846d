import { useEffect, useRef, useSyncExternalStore } from 'react';
import type { ChartType } from 'chart.js';
import { type Builder, Chart, DARK_QUERY, themeOf } from '../charts';

/** subscribeScheme calls back when the system's light or dark setting changes. */
function subscribeScheme(changed: () => void) {
  const m = matchMedia(DARK_QUERY);
  m.addEventListener('change', changed);
  return () => m.removeEventListener('change', changed);
}

/** useDark is the system's dark setting; the charts redraw in its colours when it changes. */
export const useDark = () => useSyncExternalStore(subscribeScheme, () => matchMedia(DARK_QUERY).matches);

/**
 * ChartBox draws build's chart of data on a canvas sized by its box (the
 * chart follows the box's width). Screen readers read the table beside it,
 * which has the same numbers.
 */
export function ChartBox<T extends ChartType, D, In>(props: { label: string; height: number; build: Builder<T, D, In>; data: In; dark: boolean }) {
  const { label, height, build, data, dark } = props;
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart<T, D, string>(canvas.current, build(data, themeOf(canvas.current, dark)));
    return () => chart.destroy();
  }, [build, data, dark]);
  return (
    <div className="chart" style={{ position: 'relative', height }}>
      <canvas ref={canvas} role="img" aria-label={label}>
        {label}: the table has its numbers.
      </canvas>
    </div>
  );
}
