import { Status } from '../../components/Status';
import type { ApprovalContext } from '../../services/approvals';

/** ApprovalWebhook is the approval.pending event the endpoints got, and how each delivery went. */
export function ApprovalWebhook({ webhook }: { webhook: ApprovalContext['webhook'] }) {
  return (
    <section className="mt-4" aria-label="Webhook">
      <h2>Originating webhook</h2>
      {webhook.deliveries.length > 0 ? (
        <ul className="m-0 grid gap-1 pl-5">
          {webhook.deliveries.map((d) => (
            <li key={d.endpointId}>
              {d.format} endpoint {new URL(d.url).host}: <Status status={d.status} /> ({d.attempts} attempt{d.attempts === 1 ? '' : 's'})
            </li>
          ))}
        </ul>
      ) : (
        <p className="notice">No endpoint was subscribed to approval.pending.</p>
      )}
      {webhook.event !== null && (
        <pre data-testid="payload" className="mt-2 max-h-96 wrap-anywhere whitespace-pre-wrap" tabIndex={0}>
          {JSON.stringify(webhook.event, null, 2)}
        </pre>
      )}
    </section>
  );
}
