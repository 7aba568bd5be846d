import type { Approval, Session } from './api';

/** OverviewPage is the account at a glance (being built). */
export function OverviewPage(_: { session: Session; pending: Approval[] | null }) {
  return (
    <main>
      <h1>Overview</h1>
    </main>
  );
}
