import type { DeliveryStatus } from '../../services/webhooks';
import { UUID, oneOf } from '../../search';

/** endpointParams keeps an endpoint's id only in the API's form (a UUID): another shows the overview. */
export const endpointParams = {
  parse: ({ id }: { id: string }) => ({ id: UUID.test(id) ? id : null }),
  stringify: ({ id }: { id: string | null }) => ({ id: id ?? '' }),
};

/** EndpointSearch is the delivery log's filter (?status=failed): a link opens the failed deliveries. */
export type EndpointSearch = { status?: DeliveryStatus };

export const endpointSearch = (s: Record<string, unknown>): EndpointSearch => ({
  status: oneOf(s.status, ['pending', 'succeeded', 'failed'] as const),
});
