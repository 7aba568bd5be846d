import { createFileRoute } from '@tanstack/react-router';
import { Home } from '../../pages/overview/Home';
import { WebhookPage } from '../../pages/webhooks/WebhookPage';
import { warm, warmList } from '../../services/queryClient';
import { deliveryHeadQuery, deliveryPagesQuery, endpointQuery } from '../../services/webhooks';
import { useSession } from '../../session';
import { endpointParams, endpointSearch } from './$id.schema';

/** A webhook endpoint: its settings and its delivery log, filtered by the URL (?status=…). */
export const Route = createFileRoute('/webhooks/$id')({
  params: endpointParams,
  validateSearch: endpointSearch,
  loaderDeps: ({ search }) => ({ status: search.status ?? '' }),
  beforeLoad: ({ params: { id }, search }) =>
    id
      ? {
          endpoint: {
            endpoint: endpointQuery(id),
            head: deliveryHeadQuery(id, search.status ?? ''),
            pages: deliveryPagesQuery(id, search.status ?? ''),
          },
        }
      : { endpoint: null },
  loader: ({ context: { queryClient, endpoint } }) => {
    if (!endpoint) return;
    warm(queryClient.ensureQueryData(endpoint.endpoint), queryClient.ensureQueryData(endpoint.head));
    warmList(endpoint.pages);
  },
  component: function Endpoint() {
    const { id } = Route.useParams();
    const session = useSession();
    return id ? <WebhookPage key={id} id={id} session={session} /> : <Home />;
  },
});
