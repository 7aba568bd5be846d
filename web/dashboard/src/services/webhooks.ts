// Webhooks: the endpoints that receive the account's events (signed JSON
// POSTs or Slack messages) and the log of their deliveries.
import { queryOptions, infiniteQueryOptions } from '@tanstack/react-query';
import { API, type Page, type Schemas, call, date } from './api';
import { POLL, cursorPages, every, poll } from './queryClient';

export type EndpointFromAPI = Schemas['WebhookEndpoint'];
export type EndpointWithSecretFromAPI = Schemas['EndpointWithSecret'];
export type DeliveryFromAPI = Schemas['DeliveryOut'];
/**
 * DeliveryDetailFromAPI is a delivery with its attempts and its payload:
 * the JSON envelope {event, event_id, timestamp, data}, the bytes a JSON
 * endpoint gets and signs (a Slack endpoint gets a message rendered from it).
 */
export type DeliveryDetailFromAPI = Schemas['DeliveryOutputBody'];
/** EndpointSettings is the body of a create or a PATCH, as the API takes it. */
export type EndpointSettings = Schemas['EndpointBody'];
export type Format = EndpointFromAPI['format'];
export type DeliveryStatus = DeliveryFromAPI['status'];

/** Endpoint is an endpoint as the pages read it. */
export interface Endpoint {
  id: string;
  url: string;
  format: Format;
  events: string[];
  description: string | null;
  enabled: boolean;
  /** The Slack members whose clicks on approval messages count (empty: anyone in the channel). */
  slackApprovers: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Until when the secret before the last rotation still signs. */
  previousSecretExpiresAt: Date | null;
}

export const toEndpoint = (e: EndpointFromAPI): Endpoint => ({
  id: e.id,
  url: e.url,
  format: e.format,
  events: e.events,
  description: e.description,
  enabled: e.enabled,
  slackApprovers: e.slack_approvers,
  createdAt: date(e.created_at),
  updatedAt: date(e.updated_at),
  previousSecretExpiresAt: date(e.previous_secret_expires_at),
});

/** EndpointWithSecret is an endpoint just made or rotated, with its signing secret: shown once. */
export interface EndpointWithSecret extends Endpoint {
  secret: string;
}

const toEndpointWithSecret = (e: EndpointWithSecretFromAPI): EndpointWithSecret => ({ ...toEndpoint(e), secret: e.secret });

/** Delivery is one event's delivery to an endpoint. */
export interface Delivery {
  id: string;
  endpointId: string;
  event: string;
  eventId: string;
  status: DeliveryStatus;
  attempts: number;
  /** The delivery it replays (same event, a new delivery). */
  replayOf: string | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  completedAt: Date | null;
}

export const toDelivery = (d: DeliveryFromAPI): Delivery => ({
  id: d.id,
  endpointId: d.endpoint_id,
  event: d.event,
  eventId: d.event_id,
  status: d.status,
  attempts: d.attempts,
  replayOf: d.replay_of,
  createdAt: date(d.created_at),
  lastAttemptAt: date(d.last_attempt_at),
  completedAt: date(d.completed_at),
});

/** Attempt is one POST of a delivery: its answer, or why there was none. */
export interface Attempt {
  n: number;
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The start of the endpoint's answer. */
  responseHead: string | null;
}

/** DeliveryDetail is a delivery with its attempts and the payload it POSTs. */
export interface DeliveryDetail extends Delivery {
  attemptLog: Attempt[];
  payload: unknown;
}

export const toDeliveryDetail = (d: DeliveryDetailFromAPI): DeliveryDetail => ({
  ...toDelivery(d),
  attemptLog: d.attempt_log.map((a) => ({
    n: a.n,
    at: date(a.at),
    statusCode: a.status_code,
    latencyMs: a.latency_ms,
    error: a.error,
    responseHead: a.response_head,
  })),
  payload: d.payload,
});

/** EVENTS are the kinds an endpoint may subscribe to, with what they mean. */
export const EVENTS: { kind: string; what: string }[] = [
  { kind: 'tx.sent', what: 'a payment was sent' },
  { kind: 'tx.received', what: 'money came into a wallet' },
  { kind: 'tx.receive_failed', what: 'a deposit was undone (dropped by a fork)' },
  { kind: 'wallet.unexplained_outflow', what: 'money left a wallet without the service' },
  { kind: 'wallet.balance_mismatch', what: "a wallet's balance on chain differs from its ledger" },
  { kind: 'tx.blocked', what: 'a policy refused a payment' },
  { kind: 'tx.failed', what: 'a sent payment failed on chain' },
  { kind: 'approval.pending', what: 'a payment waits for approval' },
  { kind: 'approval.vote', what: 'one of several people approved' },
  { kind: 'approval.approved', what: 'an approval was approved' },
  { kind: 'approval.rejected', what: 'an approval was rejected' },
  { kind: 'approval.expired', what: 'an approval expired undecided' },
  { kind: 'x402.expired', what: 'a signed x402 payment was never settled' },
  { kind: 'mpp.expired', what: 'a signed MPP charge was never broadcast' },
  { kind: 'user.added', what: 'a person was added to the account (a new owner among them)' },
];

export const STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/**
 * webhookKeys name the webhooks' reads: the endpoints, each endpoint, and
 * each endpoint's deliveries (the polled first page, the pages loaded
 * after it, one delivery's detail).
 */
export const webhookKeys = {
  endpoints: ['webhooks'] as const,
  endpointDetails: ['webhook'] as const,
  endpoint: (id: string) => ['webhook', id] as const,
  deliveries: ['deliveries'] as const,
  deliveryHeads: (endpointID: string) => ['deliveries', endpointID, 'head'] as const,
  deliveryHead: (endpointID: string, status: string) => ['deliveries', endpointID, 'head', status] as const,
  deliveryPages: (endpointID: string, status: string) => ['deliveries', endpointID, 'pages', status] as const,
  details: ['delivery'] as const,
  delivery: (id: string) => ['delivery', id] as const,
};

const endpointPath = (id: string) => `${API}/webhook-endpoints/${encodeURIComponent(id)}`;
const deliveryPath = (id: string) => `${API}/deliveries/${encodeURIComponent(id)}`;

/** endpointsQuery reads the account's endpoints. */
export const endpointsQuery = () =>
  queryOptions({
    queryKey: webhookKeys.endpoints,
    queryFn: async ({ signal }) =>
      (await call<Schemas['ListEndpointsOutputBody']>('GET', `${API}/webhook-endpoints`, undefined, signal)).endpoints.map(toEndpoint),
  });

/** endpointQuery reads one endpoint. */
export const endpointQuery = (id: string) =>
  queryOptions({
    queryKey: webhookKeys.endpoint(id),
    queryFn: ({ signal }) => call<EndpointFromAPI>('GET', endpointPath(id), undefined, signal).then(toEndpoint),
  });

/** listDeliveries is a page of an endpoint's deliveries, newest first, of one status or all (''). */
export async function listDeliveries(
  endpointID: string,
  status: DeliveryStatus | '',
  cursor?: string,
  signal?: AbortSignal,
  limit = 20,
): Promise<Page<Delivery>> {
  const q = new URLSearchParams({ limit: String(limit) });
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  const r = await call<Schemas['ListDeliveriesOutputBody']>('GET', `${endpointPath(endpointID)}/deliveries?${q}`, undefined, signal);
  return { items: r.deliveries.map(toDelivery), nextCursor: r.next_cursor };
}

/** deliveryPagesQuery pages an endpoint's log by cursor ("Load more" appends the next page). */
export const deliveryPagesQuery = (endpointID: string, status: DeliveryStatus | '') =>
  infiniteQueryOptions({
    queryKey: webhookKeys.deliveryPages(endpointID, status),
    queryFn: ({ pageParam, signal }) => listDeliveries(endpointID, status, pageParam, signal),
    ...cursorPages,
  });

/**
 * deliveryHeadQuery is the log's first page, polled so new deliveries
 * appear and statuses change without a reload; polled even while the
 * stream is up: it announces only failed deliveries, not new or
 * succeeded ones.
 */
export const deliveryHeadQuery = (endpointID: string, status: DeliveryStatus | '') =>
  queryOptions({
    queryKey: webhookKeys.deliveryHead(endpointID, status),
    queryFn: ({ signal }) => listDeliveries(endpointID, status, undefined, signal),
    ...poll(POLL, false),
  });

/** deliveryQuery is one delivery's attempts and payload, polled while it is pending. */
export const deliveryQuery = (id: string) =>
  queryOptions({
    queryKey: webhookKeys.delivery(id),
    queryFn: ({ signal }) => call<DeliveryDetailFromAPI>('GET', deliveryPath(id), undefined, signal).then(toDeliveryDetail),
    ...poll(POLL, false),
    // Once done, a delivery changes no more: no more reads of the rate limit.
    // Until then polled, stream or not: the stream announces no attempt.
    refetchInterval: (q) => (q.state.data && q.state.data.status !== 'pending' ? false : every(POLL, false)),
  });

export const createEndpoint = (body: EndpointSettings) =>
  call<EndpointWithSecretFromAPI>('POST', `${API}/webhook-endpoints`, body).then(toEndpointWithSecret);
export const updateEndpoint = (id: string, body: EndpointSettings) => call<EndpointFromAPI>('PATCH', endpointPath(id), body).then(toEndpoint);
export const deleteEndpoint = (id: string) => call<void>('DELETE', endpointPath(id));
export const rotateSecret = (id: string) => call<EndpointWithSecretFromAPI>('POST', `${endpointPath(id)}/rotate-secret`).then(toEndpointWithSecret);
/** testEndpoint queues a webhook.test event to the endpoint alone; the answer is its delivery. */
export const testEndpoint = (id: string) => call<DeliveryFromAPI>('POST', `${endpointPath(id)}/test`).then(toDelivery);
/** replayDelivery makes a new delivery of the same event (same event_id) to the same endpoint. */
export const replayDelivery = (id: string) => call<DeliveryFromAPI>('POST', `${deliveryPath(id)}/replay`).then(toDelivery);
