import { createFileRoute } from '@tanstack/react-router';
import { ExportPage } from '../../../pages/exports/ExportPage';
import { Home } from '../../../pages/overview/Home';
import { useSession } from '../../../session';
import { exportParams } from './$exportId.schema';

/** A request to export a wallet's secret: its state, the recipient key, the decision, and once exported the sealed secret. */
export const Route = createFileRoute('/exports/$walletId/$exportId')({
  params: exportParams,
  component: function Export() {
    const { walletId, exportId } = Route.useParams();
    const session = useSession();
    return walletId && exportId ? <ExportPage key={exportId} walletId={walletId} exportId={exportId} session={session} /> : <Home />;
  },
});
