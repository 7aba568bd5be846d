import { ago, when } from '../format';

/**
 * Time is a moment as people read it at a glance ("5 minutes ago"), with
 * the exact time on hover (title) and in the markup (dateTime).
 */
export function Time({ iso, now, className }: { iso: string | null; now?: number; className?: string }) {
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={when(iso)} className={className}>
      {ago(iso, now)}
    </time>
  );
}
