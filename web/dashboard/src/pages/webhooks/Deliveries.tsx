import { useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Empty } from '../../components/Empty';
import { LoadMore, itemsOf } from '../../components/LoadMore';
import { SkeletonRows } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { errorText, stamp } from '../../format';
import type { Page } from '../../services/api';
import { invalidate } from '../../services/queryClient';
import { type Delivery, type DeliveryStatus, type Format, deliveryHeadQuery, deliveryPagesQuery, replayDelivery } from '../../services/webhooks';
import { DeliveryDetail } from './DeliveryDetail';

/**
 * mergeDeliveries is the log as shown: the polled first page (head) is the
 * truth for the span it covers, and what left it (another status now)
 * goes; the older pages loaded follow it. null until either is read.
 */
export function mergeDeliveries(head: Page<Delivery> | undefined, older: Delivery[] | null): Delivery[] | null {
  if (!head) return older;
  const first = head.items;
  if (head.nextCursor === null) return first;
  const seen = new Set(first.map((d) => d.id));
  const oldest = first.length ? first[first.length - 1].createdAt.getTime() : Infinity;
  return [...first, ...(older ?? []).filter((d) => !seen.has(d.id) && d.createdAt.getTime() <= oldest)];
}

/**
 * Deliveries pages the log by cursor and polls its first page, so new
 * deliveries appear and statuses change without a reload. The polled page
 * replaces what it covers; older pages follow it.
 */
export function Deliveries({
  endpointID,
  format,
  status,
  owner,
  onReplayed,
  onError,
}: {
  endpointID: string;
  format: Format;
  status: DeliveryStatus | '';
  owner: boolean;
  onReplayed: (text: string) => void;
  onError: (text: string) => void;
}) {
  const paged = useInfiniteQuery(deliveryPagesQuery(endpointID, status));
  const headRead = deliveryHeadQuery(endpointID, status);
  const fresh = useQuery(headRead);
  const [open, setOpen] = useState<string[]>([]);
  const shown = mergeDeliveries(fresh.data, itemsOf(paged));

  async function replay(d: Delivery) {
    try {
      const r = await replayDelivery(d.id);
      await invalidate(headRead.queryKey);
      onReplayed(`Replayed ${d.event} as a new delivery (${r.id.slice(0, 8)}).`);
    } catch (e) {
      onError(errorText(e));
    }
  }

  const failure = paged.error ?? fresh.error;
  const error = failure ? errorText(failure) : '';
  return (
    <>
      {error && <p className="error">Could not load the deliveries: {error}</p>}
      {shown === null ? (
        !error && <SkeletonRows rows={3} height="h-12" />
      ) : shown.length === 0 ? (
        <Empty title={`No deliveries${status ? ` ${status}` : ''}.`}>
          {status
            ? 'Pick “any” status to see every delivery.'
            : 'Events the endpoint subscribes to are delivered as they happen; “Send test event” sends one now.'}
        </Empty>
      ) : (
        <ul className="m-0 mb-4 grid list-none gap-2 p-0" aria-label="Deliveries">
          {shown.map((d) => {
            const expanded = open.includes(d.id);
            return (
              <li key={d.id} data-delivery={d.id} data-status={d.status} data-event-id={d.eventId} className="card min-w-0 px-3 py-2">
                <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                  <Status status={d.status} />
                  <code>{d.event}</code>
                  <span className="notice">
                    {stamp(d.createdAt)} · {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
                    {d.replayOf && ' · replay'}
                  </span>
                  <span className="buttons sm:ml-auto">
                    <button
                      className="btn"
                      type="button"
                      aria-expanded={expanded}
                      aria-controls={`delivery-${d.id}`}
                      onClick={() => setOpen(expanded ? open.filter((x) => x !== d.id) : [...open, d.id])}
                    >
                      {expanded ? 'Hide' : 'Details'}
                    </button>
                    {owner && (
                      <button type="button" className="btn" onClick={() => replay(d)}>
                        Replay
                      </button>
                    )}
                  </span>
                </div>
                {expanded && <DeliveryDetail id={d.id} format={format} />}
              </li>
            );
          })}
        </ul>
      )}
      <LoadMore list={paged} />
    </>
  );
}
