import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Empty } from '../../components/Empty';
import { SkeletonRows } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { Table } from '../../components/Table';
import { errorText } from '../../format';
import { invalidate } from '../../services/queryClient';
import type { Session } from '../../services/session';
import { type EndpointWithSecret, createEndpoint, endpointsQuery, webhookKeys } from '../../services/webhooks';
import { EndpointForm, blank } from './EndpointForm';
import { Secret } from './Secret';

/** WebhooksPage lists the account's webhook endpoints; owners create them. */
export function WebhooksPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  const list = useQuery(endpointsQuery());
  const endpoints = list.data ?? null;
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [created, setCreated] = useState<EndpointWithSecret | null>(null);
  const [adding, setAdding] = useState(false);
  const load = () => invalidate(webhookKeys.endpoints);

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
        <Table label="Endpoints" className="mt-4 table" columns={['URL', 'Format', 'State', 'Events', 'Description']}>
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
        </Table>
      )}
    </main>
  );
}
