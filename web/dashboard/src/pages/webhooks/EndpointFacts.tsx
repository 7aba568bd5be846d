import { stamp } from '../../format';
import type { Endpoint } from '../../services/webhooks';

/** EndpointFacts are an endpoint's settings as read: format, state, events, description, Slack approvers, dates, and the previous secret's end. */
export function EndpointFacts({ endpoint }: { endpoint: Endpoint }) {
  return (
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
          <dd>{endpoint.slackApprovers.length ? endpoint.slackApprovers.join(', ') : 'anyone in the channel'}</dd>
        </>
      )}
      <dt>Created</dt>
      <dd>{stamp(endpoint.createdAt)}</dd>
      <dt>Changed</dt>
      <dd>{stamp(endpoint.updatedAt)}</dd>
      {endpoint.previousSecretExpiresAt && (
        <>
          <dt>Previous secret</dt>
          <dd>still signs until {stamp(endpoint.previousSecretExpiresAt)}</dd>
        </>
      )}
    </dl>
  );
}
