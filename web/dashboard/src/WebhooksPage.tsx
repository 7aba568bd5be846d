import { useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import type { Session } from './api';
import {
  type Delivery,
  type DeliveryStatus,
  type Endpoint,
  type EndpointSettings,
  type EndpointWithSecret,
  type Format,
  EVENTS,
  STATUSES,
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  replayDelivery,
  rotateSecret,
  testEndpoint,
  updateEndpoint,
} from './api-webhooks';
import { ShownOnce } from './ShownOnce';
import { errorText } from './format';
import { ConfirmDialog } from './components/ConfirmDialog';
import { Empty } from './components/Empty';
import { Skeleton, SkeletonRows } from './components/Skeleton';
import { Status } from './components/Status';
import { toast } from './components/Toast';
import { POLL, cursorPages, every, invalidate, keys, poll, queryClient } from './queries';

/** stamp is a time to the second: attempts often come seconds apart. */
function stamp(iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }) + ' UTC';
}

/** Secret shows a signing secret once: only a sealed copy is kept. */
function Secret({ shown, title, onDone }: { shown: EndpointWithSecret; title: string; onDone: () => void }) {
  return (
    <ShownOnce title={title} value={shown.secret} testId="new-secret" onDone={onDone}>
      <p className="m-0">
        <strong>Copy this signing secret now.</strong> It will not be shown again. Verify each request's <code>X-Service-Signature</code> header:{' '}
        <code>sha256=</code> and the hex HMAC-SHA256 of the raw body, keyed by this secret.
      </p>
      {shown.previous_secret_expires_at && <p className="notice">The previous secret also signs until {stamp(shown.previous_secret_expires_at)}.</p>}
    </ShownOnce>
  );
}

type Draft = { url: string; format: Format; events: string[]; description: string; enabled: boolean; approvers: string };

const blank: Draft = { url: '', format: 'json', events: [], description: '', enabled: true, approvers: '' };

const draftOf = (e: Endpoint): Draft => ({
  url: e.url,
  format: e.format,
  events: e.events,
  description: e.description ?? '',
  enabled: e.enabled,
  approvers: e.slack_approvers.join(', '),
});

/**
 * settingsOf is the body of a create or a PATCH: every field, so what the
 * form shows is what is saved (an empty description clears it on a PATCH).
 */
const settingsOf = (d: Draft, creating: boolean): EndpointSettings => ({
  url: d.url.trim(),
  format: d.format,
  events: EVENTS.map((e) => e.kind).filter((k) => d.events.includes(k)),
  ...(d.description.trim() || !creating ? { description: d.description.trim() } : {}),
  enabled: d.enabled,
  ...(d.format === 'slack' ? { slack_approvers: d.approvers.split(/[\s,]+/).filter(Boolean) } : {}),
});

/** EndpointForm edits an endpoint's settings, for a new endpoint or an existing one. */
function EndpointForm({
  initial,
  creating,
  label,
  submit,
  onSubmit,
  onCancel,
}: {
  initial: Draft;
  creating: boolean;
  label: string;
  submit: string;
  onSubmit: (s: EndpointSettings) => Promise<boolean>;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(initial);
  const [busy, setBusy] = useState(false);
  const valid = d.url.trim() !== '' && d.events.length > 0;
  return (
    <form
      className="card mb-4 grid max-w-2xl gap-3 [&>label]:grid [&>label]:gap-1 [&>label>input]:w-full [&>label>select]:w-full"
      aria-label={label}
      onSubmit={async (e) => {
        e.preventDefault();
        if (!valid || busy) return;
        setBusy(true);
        if (await onSubmit(settingsOf(d, creating))) setD(initial);
        setBusy(false);
      }}
    >
      <label>
        URL{' '}
        <input
          type="url"
          required
          value={d.url}
          maxLength={2048}
          placeholder="https://example.com/hooks"
          onChange={(e) => setD({ ...d, url: e.target.value })}
        />
      </label>
      <label>
        Format{' '}
        <select value={d.format} onChange={(e) => setD({ ...d, format: e.target.value as Format })}>
          <option value="json">json (signed JSON envelope)</option>
          <option value="slack">slack (Slack incoming webhook)</option>
        </select>
      </label>
      <fieldset className="grid gap-1">
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <label key={ev.kind}>
            <input
              type="checkbox"
              checked={d.events.includes(ev.kind)}
              onChange={(e) => setD({ ...d, events: e.target.checked ? [...d.events, ev.kind] : d.events.filter((k) => k !== ev.kind) })}
            />{' '}
            <code>{ev.kind}</code> <span className="notice font-normal">{ev.what}</span>
          </label>
        ))}
      </fieldset>
      {d.format === 'slack' && (
        <label>
          Slack approvers{' '}
          <input
            value={d.approvers}
            placeholder="U024BE7LH, U0G9QF9C6 (empty: anyone in the channel)"
            onChange={(e) => setD({ ...d, approvers: e.target.value })}
          />
        </label>
      )}
      <label>
        Description <input value={d.description} maxLength={500} onChange={(e) => setD({ ...d, description: e.target.value })} />
      </label>
      <label className="!flex items-center gap-2">
        <input type="checkbox" checked={d.enabled} onChange={(e) => setD({ ...d, enabled: e.target.checked })} /> Enabled
      </label>
      <div className="buttons">
        <button type="submit" className="btn btn-primary" disabled={!valid || busy}>
          {submit}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        {d.events.length === 0 && <span className="warn">Pick at least one event.</span>}
      </div>
    </form>
  );
}

/** WebhooksPage lists the account's webhook endpoints; owners create them. */
export function WebhooksPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  const list = useQuery({ queryKey: keys.endpoints, queryFn: listEndpoints });
  const endpoints = list.data ?? null;
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [created, setCreated] = useState<EndpointWithSecret | null>(null);
  const [adding, setAdding] = useState(false);
  const load = () => invalidate(keys.endpoints);

  return (
    <main className="page">
      <h1>Webhooks</h1>
      <p className="notice">
        Endpoints receive the account's events as signed POSTs (JSON) or as Slack messages. Saving one sends it a <code>webhook.test</code> event.
        {!owner && ' Only owners change them.'}
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && (
        <Secret
          shown={created}
          title="New endpoint's signing secret"
          onDone={() => {
            setCreated(null);
            void load();
          }}
        />
      )}
      {owner &&
        (adding ? (
          <EndpointForm
            initial={blank}
            creating
            label="Create an endpoint"
            submit="Create endpoint"
            onCancel={() => setAdding(false)}
            onSubmit={async (s) => {
              setError('');
              try {
                setCreated(await createEndpoint(s));
                setAdding(false);
                await load();
                return true;
              } catch (e) {
                setError(errorText(e));
                return false;
              }
            }}
          />
        ) : (
          <button type="button" className="btn btn-primary" onClick={() => setAdding(true)}>
            Add an endpoint…
          </button>
        ))}
      {endpoints === null ? (
        !error && <SkeletonRows rows={2} height="h-12" />
      ) : endpoints.length === 0 ? (
        <div className="mt-4">
          <Empty title="No endpoints.">
            {owner ? 'Add one to get approvals, payments and failures as signed POSTs or in a Slack channel.' : 'An owner adds them.'}
          </Empty>
        </div>
      ) : (
        <table className="mt-4 table" aria-label="Endpoints">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Format</th>
              <th scope="col">State</th>
              <th scope="col">Events</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((e) => (
              <tr key={e.id} data-endpoint={e.id} className="max-sm:[grid-template-areas:'url_url'_'state_format'_'events_events'_'desc_desc']">
                <td className="max-w-[36ch] wrap-anywhere max-sm:max-w-none max-sm:[grid-area:url]">
                  <Link to="/webhooks/$id" params={{ id: e.id }} className="tap max-sm:font-semibold">
                    {e.url}
                  </Link>
                </td>
                <td className="max-sm:self-center max-sm:text-muted max-sm:[grid-area:format]" data-label="Format">
                  {e.format}
                </td>
                <td className="max-sm:text-left max-sm:[grid-area:state]">
                  <Status status={e.enabled ? 'enabled' : 'disabled'} />
                </td>
                <td className="max-sm:[grid-area:events]" data-label="Events">
                  {e.events.join(', ')}
                </td>
                <td className="max-sm:text-muted max-sm:[grid-area:desc]">{e.description || <span className="notice">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

/** WebhookPage is one endpoint: its settings (owners change them) and its delivery log. */
export function WebhookPage({ id, session }: { id: string; session: Session }) {
  const owner = session.role === 'owner';
  const key = keys.endpoint(id);
  const read = useQuery({ queryKey: key, queryFn: () => getEndpoint(id) });
  const endpoint = read.data ?? null;
  const missing = read.error && !endpoint ? errorText(read.error) : '';
  const setEndpoint = (e: Endpoint) => {
    queryClient.setQueryData(key, e);
    void invalidate(keys.endpoints);
  };
  const [error, setError] = useState('');
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  const [rotated, setRotated] = useState<EndpointWithSecret | null>(null);
  const [done, setDone] = useState('');
  const navigate = useNavigate();

  async function act(what: () => Promise<string>) {
    setError('');
    setDone('');
    try {
      setDone(await what());
      setConfirm(null);
      // Anything that adds a delivery: the log's first page reloads at once.
      void invalidate(keys.deliveryHeads(id));
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    }
  }

  async function remove() {
    setError('');
    try {
      await deleteEndpoint(id);
      toast('The endpoint was deleted.');
      void invalidate(keys.endpoints);
      void navigate({ to: '/webhooks' });
    } catch (e) {
      setError(errorText(e));
    }
  }

  if (missing) {
    return (
      <main className="page">
        <h1>Webhook endpoint</h1>
        <p className="error">Could not load this endpoint: {missing}</p>
        <Link to="/webhooks" className="tap">
          All endpoints
        </Link>
      </main>
    );
  }
  if (!endpoint) {
    return (
      <main className="page">
        <h1>Webhook endpoint</h1>
        <SkeletonRows rows={3} height="h-16" />
      </main>
    );
  }
  return (
    <main className="page">
      <p className="mb-2">
        <Link to="/webhooks" className="tap">
          ← Webhooks
        </Link>
      </p>
      <h1>Webhook endpoint</h1>
      <p className="-mt-2 mb-4 text-lg wrap-anywhere">
        <code>{endpoint.url}</code>
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className={done ? 'ok' : 'm-0'}>
        {done}
      </p>
      {rotated && <Secret shown={rotated} title="New signing secret" onDone={() => setRotated(null)} />}
      {editing ? (
        <EndpointForm
          initial={draftOf(endpoint)}
          creating={false}
          label="Edit the endpoint"
          submit="Save"
          onCancel={() => setEditing(false)}
          onSubmit={(s) =>
            act(async () => {
              const e = await updateEndpoint(id, s);
              setEndpoint(e);
              setEditing(false);
              return e.enabled ? 'Saved. A test event is on its way.' : 'Saved. The endpoint is disabled: it receives nothing new.';
            })
          }
        />
      ) : (
        <dl aria-label="Settings" className="card facts">
          <dt>Format</dt>
          <dd>{endpoint.format}</dd>
          <dt>State</dt>
          <dd data-testid="state">{endpoint.enabled ? 'enabled' : 'disabled: receives nothing new'}</dd>
          <dt>Events</dt>
          <dd data-testid="events">{endpoint.events.join(', ')}</dd>
          <dt>Description</dt>
          <dd data-testid="description">{endpoint.description || '—'}</dd>
          {endpoint.format === 'slack' && (
            <>
              <dt>Slack approvers</dt>
              <dd>{endpoint.slack_approvers.length ? endpoint.slack_approvers.join(', ') : 'anyone in the channel'}</dd>
            </>
          )}
          <dt>Created</dt>
          <dd>{stamp(endpoint.created_at)}</dd>
          <dt>Changed</dt>
          <dd>{stamp(endpoint.updated_at)}</dd>
          {endpoint.previous_secret_expires_at && (
            <>
              <dt>Previous secret</dt>
              <dd>still signs until {stamp(endpoint.previous_secret_expires_at)}</dd>
            </>
          )}
        </dl>
      )}
      {owner && !editing && (
        <div className="buttons my-4">
          <button
            type="button"
            className="btn"
            onClick={() => {
              setDone('');
              setEditing(true);
            }}
          >
            Edit
          </button>
          <button
            type="button"
            className="btn"
            disabled={!endpoint.enabled}
            title={endpoint.enabled ? undefined : 'A disabled endpoint receives nothing: enable it first'}
            onClick={() =>
              act(async () => {
                await testEndpoint(id);
                return 'Test event queued.';
              })
            }
          >
            Send test event
          </button>
          <button type="button" className="btn" onClick={() => setConfirm('rotate')}>
            Rotate secret…
          </button>
          <button type="button" className="btn btn-danger" onClick={() => setConfirm('delete')}>
            Delete…
          </button>
          <ConfirmDialog
            open={confirm !== null}
            title={confirm === 'delete' ? 'Delete this endpoint?' : 'Rotate the signing secret?'}
            confirm={confirm === 'delete' ? 'Confirm delete' : 'Confirm rotation'}
            tone="danger"
            error={error}
            onClose={() => setConfirm(null)}
            onConfirm={() =>
              confirm === 'rotate'
                ? act(async () => {
                    setRotated(await rotateSecret(id));
                    await invalidate(key);
                    return 'The secret was rotated.';
                  })
                : remove()
            }
          >
            <p className="m-0">
              {confirm === 'delete'
                ? 'The endpoint receives nothing new. Its delivery log stays readable through the API.'
                : 'A new signing secret replaces this one; the old one keeps signing beside it for 24 hours.'}
            </p>
          </ConfirmDialog>
        </div>
      )}
      <DeliveryLog
        endpointID={id}
        format={endpoint.format}
        owner={owner}
        onReplayed={(text) => {
          setError('');
          setDone(text);
        }}
        onError={setError}
      />
    </main>
  );
}

/** DeliveryLog is the endpoint's deliveries, newest first, filtered by status. */
function DeliveryLog({
  endpointID,
  format,
  owner,
  onReplayed,
  onError,
}: {
  endpointID: string;
  format: Format;
  owner: boolean;
  onReplayed: (text: string) => void;
  onError: (text: string) => void;
}) {
  // The filter is in the URL (?status=failed): a link opens the failed deliveries.
  const status: DeliveryStatus | '' = useSearch({ from: '/webhooks/$id' }).status ?? '';
  const navigate = useNavigate({ from: '/webhooks/$id' });
  const setStatus = (s: DeliveryStatus | '') => navigate({ search: s ? { status: s } : {} });
  return (
    <section aria-label="Delivery log">
      <h2>Delivery log</h2>
      <div className="filters">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {/* Keyed by the filter: a new filter starts from its own first page. */}
      <Deliveries key={status} endpointID={endpointID} format={format} status={status} owner={owner} onReplayed={onReplayed} onError={onError} />
    </section>
  );
}

/**
 * Deliveries pages the log by cursor and polls its first page, so new
 * deliveries appear and statuses change without a reload. The polled page
 * replaces what it covers; older pages follow it.
 */
function Deliveries({
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
  const paged = useInfiniteQuery({
    queryKey: keys.deliveryPages(endpointID, status),
    queryFn: ({ pageParam }) => listDeliveries(endpointID, status, pageParam),
    ...cursorPages,
  });
  const head = keys.deliveryHead(endpointID, status);
  // Polled even while the stream is up: it announces only failed deliveries, not new or succeeded ones.
  const fresh = useQuery({ queryKey: head, queryFn: () => listDeliveries(endpointID, status), ...poll(POLL, false) });
  const [open, setOpen] = useState<string[]>([]);

  const older = paged.data ? paged.data.pages.flatMap((p) => p.deliveries) : null;
  let shown: Delivery[] | null = older;
  if (fresh.data) {
    const first = fresh.data.deliveries;
    const seen = new Set(first.map((d) => d.id));
    const oldest = first.length ? Date.parse(first[first.length - 1].created_at) : Infinity;
    // The first page is the truth for the span it covers; what left it (another status now) goes.
    shown =
      fresh.data.next_cursor === null ? first : [...first, ...(older ?? []).filter((d) => !seen.has(d.id) && Date.parse(d.created_at) <= oldest)];
  }

  async function replay(d: Delivery) {
    try {
      const r = await replayDelivery(d.id);
      await invalidate(head);
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
              <li key={d.id} data-delivery={d.id} data-status={d.status} data-event-id={d.event_id} className="card min-w-0 px-3 py-2">
                <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                  <Status status={d.status} />
                  <code>{d.event}</code>
                  <span className="notice">
                    {stamp(d.created_at)} · {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
                    {d.replay_of && ' · replay'}
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
      {paged.hasNextPage && (
        <button type="button" className="btn" onClick={() => !paged.isFetchingNextPage && paged.fetchNextPage()}>
          Load more
        </button>
      )}
    </>
  );
}

/** DeliveryDetail is one delivery's attempts as a timeline and the body it POSTs; polled while open and pending. */
function DeliveryDetail({ id, format }: { id: string; format: Format }) {
  const read = useQuery({
    queryKey: keys.delivery(id),
    queryFn: () => getDelivery(id),
    ...poll(POLL, false),
    // Once done, a delivery changes no more: no more reads of the rate limit.
    // Until then polled, stream or not: the stream announces no attempt.
    refetchInterval: (q) => (q.state.data && q.state.data.status !== 'pending' ? false : every(POLL, false)),
  });
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
            Event <code>{d.event_id}</code> · delivery <code>{d.id}</code>
            {d.replay_of && (
              <>
                {' '}
                · replays <code>{d.replay_of}</code>
              </>
            )}
            {d.completed_at && <> · completed {stamp(d.completed_at)}</>}
          </p>
          <h3>Attempts</h3>
          {d.attempt_log.length === 0 ? (
            <p className="notice">No attempt yet.</p>
          ) : (
            <ol className="m-0 grid list-none gap-2 border-l-2 border-line py-0 pr-0 pl-5" aria-label="Attempts">
              {d.attempt_log.map((a) => {
                const ok = a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
                return (
                  <li key={a.n} data-attempt={a.n} className="relative min-w-0">
                    <span className={`absolute top-1.5 -left-[1.65rem] size-3 rounded-full ${ok ? 'bg-ok' : 'bg-bad'}`} aria-hidden="true" />
                    <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
                      <strong>#{a.n}</strong>
                      <span>{stamp(a.at)}</span>
                      <Status status={ok ? 'succeeded' : 'failed'} label={String(a.status_code ?? 'no answer')} testId="status-code" />
                      <span>{a.latency_ms} ms</span>
                    </div>
                    {a.error && <p className="my-1 wrap-anywhere text-bad">{a.error}</p>}
                    {a.response_head && (
                      <pre className="my-1 max-h-32 overflow-y-auto wrap-anywhere whitespace-pre-wrap" tabIndex={0}>
                        {a.response_head}
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
