import { useState } from 'react';
import { Link } from '@tanstack/react-router';
import { Form } from '../../components/Form';
import { errorText } from '../../format';
import { type Export, exportKeys, recipientKeyProblem, requestExport } from '../../services/exports';
import { invalidate } from '../../services/queryClient';
import type { Wallet } from '../../services/wallets';

/**
 * AskExport lets an owner ask for the wallet's secret, sealed to an
 * X25519 public key they paste (base64 of 32 bytes, checked here as the
 * API does). Nothing leaves until another owner approves the request on
 * the Exports page. A wallet whose key is in an HSM or a KMS never leaves.
 */
export function AskExport({ agent }: { agent: Wallet }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [asked, setAsked] = useState<Export | null>(null);
  const problem = recipientKeyProblem(key);
  if (agent.signer !== 'local') {
    return (
      <section className="card mt-4" aria-label="Export the secret">
        <h2>Export the secret</h2>
        <p className="notice m-0">This wallet&apos;s key is kept in a signer that never lets it out ({agent.signer}): it cannot be exported.</p>
      </section>
    );
  }
  const ask = async () => {
    if (problem || key.trim() === '') return;
    setBusy(true);
    setError('');
    try {
      setAsked(await requestExport(agent.id, key));
      setKey('');
      await invalidate(exportKeys.all);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card mt-4" aria-label="Export the secret">
      <h2>Export the secret</h2>
      <p className="notice">
        Ask for this wallet&apos;s secret, sealed to an X25519 public key whose private half you hold. Another owner must approve; then the secret
        exists outside the service for good, beyond every policy.
      </p>
      <Form className="grid gap-2" aria-label="Ask to export the secret" noValidate onSubmit={ask}>
        <div className="field">
          <label htmlFor="export-recipient">Recipient public key (X25519, base64)</label>
          <input
            id="export-recipient"
            value={key}
            placeholder="44 characters of base64, ending in ="
            spellCheck={false}
            autoComplete="off"
            maxLength={200}
            aria-invalid={problem !== ''}
            aria-describedby="export-recipient-note"
            className="w-full font-mono text-sm"
            onChange={(e) => setKey(e.target.value)}
          />
          <span id="export-recipient-note" className="field-error">
            {problem}
          </span>
        </div>
        <div>
          <button type="submit" className="btn" disabled={busy || problem !== '' || key.trim() === ''}>
            {busy ? 'Asking…' : 'Ask to export'}
          </button>
        </div>
      </Form>
      {error && (
        <p role="alert" className="error mt-2 mb-0">
          {error}
        </p>
      )}
      {asked && (
        <p role="status" className="ok mt-2 mb-0">
          Asked: the request waits for another owner on the{' '}
          <Link to="/exports/$walletId/$exportId" params={{ walletId: asked.walletId, exportId: asked.id }}>
            export request&apos;s page
          </Link>
          .
        </p>
      )}
    </section>
  );
}
