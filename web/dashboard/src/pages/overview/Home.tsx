import { useSession } from '../../session';
import { usePending } from '../approvals/usePending';
import { OverviewPage } from './OverviewPage';

/** Home is the dashboard's home: the overview, also shown for an unknown path or id. */
export function Home() {
  return <OverviewPage session={useSession()} pending={usePending().pending} />;
}
