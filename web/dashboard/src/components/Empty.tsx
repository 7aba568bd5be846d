import type { ReactNode } from 'react';

/** Empty says that a list has nothing yet, and what to do next. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-line-strong/60 px-4 py-5 text-center">
      <p className="m-0 font-semibold">{title}</p>
      {children && <div className="mt-1 text-sm text-muted">{children}</div>}
    </div>
  );
}
