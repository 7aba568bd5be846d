import { ago, when } from '../format';

/**
 * Time is a moment as people read it at a glance ("5 minutes ago"), with
 * the exact time on hover (title) and in the markup (dateTime).
 */
export function Time({ at, now, className }: { at: Date | string | null; now?: number; className?: string }) {
  if (!at) return <span className={className}>—</span>;
  return (
    <time dateTime={typeof at === 'string' ? at : at.toISOString()} title={when(at)} className={className}>
      {ago(at, now)}
    </time>
  );
}
