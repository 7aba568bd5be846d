/**
 * Skeleton stands where content will be while it loads, in about its
 * shape, so the page does not jump when it arrives. Screen readers hear
 * that it loads (aria-busy and a hidden word), not the placeholder.
 */
export function Skeleton({ lines = 3, className = '' }: { lines?: number; className?: string }) {
  return (
    <div className={`grid gap-2 ${className}`} aria-busy="true" data-skeleton>
      <span className="sr-only">Loading</span>
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="skeleton h-5" style={{ width: `${90 - ((i * 17) % 40)}%` }} aria-hidden="true" />
      ))}
    </div>
  );
}

/** SkeletonRows is a list's or a table's placeholder: n card-sized rows. */
export function SkeletonRows({ rows = 3, height = 'h-16' }: { rows?: number; height?: string }) {
  return (
    <div className="grid gap-2" aria-busy="true" data-skeleton>
      <span className="sr-only">Loading</span>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className={`skeleton ${height}`} aria-hidden="true" />
      ))}
    </div>
  );
}
