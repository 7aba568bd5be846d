// The webhook endpoints and their deliveries, through the public REST API
// (the same call() as the other pages: session cookie and CSRF token).
// The types are the SDK's, generated from the OpenAPI document.
import { API, type Schemas, call } from './api';
export type Endpoint = Schemas['WebhookEndpoint'];
export type EndpointWithSecret = Schemas['EndpointWithSecret'];
export type EndpointSettings = Schemas['EndpointBody'];
export type Delivery = Schemas['DeliveryOut'];
export type DeliveryStatus = Delivery['status'];
export type Format = Endpoint['format'];

/**
 * DeliveryDetail is a delivery with its attempts and its payload: the JSON
 * envelope {event, event_id, timestamp, data}, the bytes a JSON endpoint
 * gets and signs (a Slack endpoint gets a message rendered from it).
 */
export type DeliveryDetail = Schemas['DeliveryOutputBody'];

/** EVENTS are the kinds an endpoint may subscribe to, with what they mean. */
export const EVENTS: { kind: string; what: string }[] = [
  { kind: 'tx.sent', what: 'a payment was sent' },
  { kind: 'tx.blocked', what: 'a policy refused a payment' },
  { kind: 'tx.failed', what: 'a sent payment failed on chain' },
  { kind: 'approval.pending', what: 'a payment waits for approval' },
  { kind: 'approval.vote', what: 'one of several people approved' },
  { kind: 'approval.approved', what: 'an approval was approved' },
  { kind: 'approval.rejected', what: 'an approval was rejected' },
  { kind: 'approval.expired', what: 'an approval expired undecided' },
  { kind: 'x402.expired', what: 'a signed x402 payment was never settled' },
];

export const STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

const endpointPath = (id: string) => `${API}/webhook-endpoints/${encodeURIComponent(id)}`;
const deliveryPath = (id: string) => `${API}/deliveries/${encodeURIComponent(id)}`;

export const listEndpoints = () => call<Schemas['ListEndpointsOutputBody']>('GET', `${API}/webhook-endpoints`).then((r) => r.endpoints);
export const getEndpoint = (id: string) => call<Endpoint>('GET', endpointPath(id));
export const createEndpoint = (body: EndpointSettings) => call<EndpointWithSecret>('POST', `${API}/webhook-endpoints`, body);
export const updateEndpoint = (id: string, body: EndpointSettings) => call<Endpoint>('PATCH', endpointPath(id), body);
export const deleteEndpoint = (id: string) => call<void>('DELETE', endpointPath(id));
export const rotateSecret = (id: string) => call<EndpointWithSecret>('POST', `${endpointPath(id)}/rotate-secret`);
/** testEndpoint queues a webhook.test event to the endpoint alone; the answer is its delivery. */
export const testEndpoint = (id: string) => call<Delivery>('POST', `${endpointPath(id)}/test`);

export const listDeliveries = (endpointID: string, status: DeliveryStatus | '', cursor?: string, limit = 20) => {
  const q = new URLSearchParams({ limit: String(limit) });
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  return call<Schemas['ListDeliveriesOutputBody']>('GET', `${endpointPath(endpointID)}/deliveries?${q}`);
};
export const getDelivery = (id: string) => call<DeliveryDetail>('GET', deliveryPath(id));
/** replayDelivery makes a new delivery of the same event (same event_id) to the same endpoint. */
export const replayDelivery = (id: string) => call<Delivery>('POST', `${deliveryPath(id)}/replay`);
