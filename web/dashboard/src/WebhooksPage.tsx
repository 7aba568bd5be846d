import type { Session } from './api';

/** WebhooksPage lists the account's webhook endpoints (being built). */
export function WebhooksPage(_: { session: Session }) {
  return (
    <main>
      <h1>Webhooks</h1>
    </main>
  );
}

/** WebhookPage is one endpoint and its delivery log (being built). */
export function WebhookPage(_: { id: string; session: Session }) {
  return (
    <main>
      <h1>Webhook endpoint</h1>
    </main>
  );
}
