import { useQuery } from '@tanstack/react-query';
import { Skeleton } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { errorText, stamp } from '../../format';
import { type Format, deliveryQuery } from '../../services/webhooks';

/** DeliveryDetail is one delivery's attempts as a timeline and the body it POSTs; polled while open and pending. */
export function DeliveryDetail({ id, format }: { id: string; format: Format }) {
  const read = useQuery(deliveryQuery(id));
  const d = read.data ?? null;
  const error = read.error ? errorText(read.error) : '';
  return (
    <div className="mt-2 min-w-0 border-t border-line pt-1" id={`delivery-${id}`}>
      {error && <p className="error">Could not load the delivery: {error}</p>}
      {d === null ? (
        !error && <Skeleton lines={3} />
      ) : (
        <>
          <p className="notice">
            Event <code>{d.eventId}</code> · delivery <code>{d.id}</code>
            {d.replayOf && (
              <>
                {' '}
                · replays <code>{d.replayOf}</code>
              </>
            )}
            {d.completedAt && <> · completed {stamp(d.completedAt)}</>}
          </p>
          <h3>Attempts</h3>
          {d.attemptLog.length === 0 ? (
            <p className="notice">No attempt yet.</p>
          ) : (
            <ol className="m-0 grid list-none gap-2 border-l-2 border-line py-0 pr-0 pl-5" aria-label="Attempts">
              {d.attemptLog.map((a) => {
                const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
                return (
                  <li key={a.n} data-attempt={a.n} className="relative min-w-0">
                    <span className={`absolute top-1.5 -left-[1.65rem] size-3 rounded-full ${ok ? 'bg-ok' : 'bg-bad'}`} aria-hidden="true" />
                    <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                      <strong>#{a.n}</strong>
                      <span>{stamp(a.at)}</span>
                      <Status status={ok ? 'succeeded' : 'failed'} label={String(a.statusCode ?? 'no answer')} testId="status-code" />
                      <span>{a.latencyMs} ms</span>
                    </div>
                    {a.error && <p className="my-1 wrap-anywhere text-bad">{a.error}</p>}
                    {a.responseHead && (
                      <pre className="my-1 max-h-32 overflow-y-auto wrap-anywhere whitespace-pre-wrap" tabIndex={0}>
                        {a.responseHead}
                      </pre>
                    )}
                  </li>
                );
              })}
            </ol>
          )}
          <h3>Payload</h3>
          {format === 'slack' && <p className="notice">The event as a JSON endpoint gets it; this Slack endpoint gets a message made from it.</p>}
          <pre className="my-1 max-h-96 overflow-y-auto wrap-anywhere whitespace-pre-wrap" data-testid="payload" tabIndex={0}>
            {JSON.stringify(d.payload, null, 2)}
          </pre>
        </>
      )}
    </div>
  );
}
