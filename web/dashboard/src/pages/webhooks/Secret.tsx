import { ShownOnce } from '../../components/ShownOnce';
import { stamp } from '../../format';
import type { EndpointWithSecret } from '../../services/webhooks';

/** Secret shows a signing secret once: only a sealed copy is kept. */
export function Secret({ shown, title, onDone }: { shown: EndpointWithSecret; title: string; onDone: () => void }) {
  return (
    <ShownOnce title={title} value={shown.secret} testId="new-secret" onDone={onDone}>
      <p className="m-0">
        <strong>Copy this signing secret now.</strong> It will not be shown again. Verify each request's <code>X-Service-Signature</code> header:{' '}
        <code>sha256=</code> and the hex HMAC-SHA256 of the raw body, keyed by this secret.
      </p>
      {shown.previousSecretExpiresAt && <p className="notice">The previous secret also signs until {stamp(shown.previousSecretExpiresAt)}.</p>}
    </ShownOnce>
  );
}
