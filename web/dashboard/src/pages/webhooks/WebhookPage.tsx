import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { SkeletonRows } from '../../components/Skeleton';
import { toast } from '../../components/Toast';
import { errorText } from '../../format';
import { invalidate, queryClient } from '../../services/queryClient';
import type { Session } from '../../services/session';
import {
  type Endpoint,
  type EndpointWithSecret,
  deleteEndpoint,
  endpointQuery,
  rotateSecret,
  testEndpoint,
  updateEndpoint,
  webhookKeys,
} from '../../services/webhooks';
import { DeliveryLog } from './DeliveryLog';
import { EndpointFacts } from './EndpointFacts';
import { EndpointForm, draftOf } from './EndpointForm';
import { Secret } from './Secret';

/** WebhookPage is one endpoint: its settings (owners change them) and its delivery log. */
export function WebhookPage({ id, session }: { id: string; session: Session }) {
  const owner = session.role === 'owner';
  const endpointRead = endpointQuery(id);
  const key = endpointRead.queryKey;
  const read = useQuery(endpointRead);
  const endpoint = read.data ?? null;
  const missing = read.error && !endpoint ? errorText(read.error) : '';
  const setEndpoint = (e: Endpoint) => {
    queryClient.setQueryData(key, e);
    void invalidate(webhookKeys.endpoints);
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
      void invalidate(webhookKeys.deliveryHeads(id));
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
      void invalidate(webhookKeys.endpoints);
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
        <EndpointFacts endpoint={endpoint} />
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
