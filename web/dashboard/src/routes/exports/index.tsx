import { createFileRoute } from '@tanstack/react-router';
import { ExportsPage } from '../../pages/exports/ExportsPage';
import { useSession } from '../../session';
import { exportsSearch } from './index.schema';

/** The requests to export a wallet's secret, pending first (?state=… one state); owners decide them. */
export const Route = createFileRoute('/exports/')({
  validateSearch: exportsSearch,
  component: function Exports() {
    const { state } = Route.useSearch();
    const navigate = Route.useNavigate();
    return <ExportsPage session={useSession()} state={state} onState={(s) => void navigate({ search: s ? { state: s } : {} })} />;
  },
});
