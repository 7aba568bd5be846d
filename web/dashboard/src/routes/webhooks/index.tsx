import { createFileRoute } from '@tanstack/react-router';
import { WebhooksPage } from '../../pages/webhooks/WebhooksPage';
import { warm } from '../../services/queryClient';
import { endpointsQuery } from '../../services/webhooks';
import { useSession } from '../../session';

/** The webhook endpoints; owners create them. */
export const Route = createFileRoute('/webhooks/')({
  beforeLoad: () => ({ endpoints: endpointsQuery() }),
  loader: ({ context: { queryClient, endpoints } }) => warm(queryClient.ensureQueryData(endpoints)),
  component: function Webhooks() {
    return <WebhooksPage session={useSession()} />;
  },
});
