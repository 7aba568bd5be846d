import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { actor, errorText } from '../../format';
import { type Export, type WalletName, decideExport, exportKeys } from '../../services/exports';
import { invalidate } from '../../services/queryClient';
import type { Session } from '../../services/session';

/**
 * Decide offers an owner the decision on a pending request: Approve (not
 * to the owner who asked: another owner must) and Reject, each confirmed
 * in an alert dialog that shows the wallet and the key the secret would
 * be sealed to. onDecided receives the request after the decision.
 */
export function Decide({
  x,
  wallet,
  session,
  onDecided,
}: {
  x: Export;
  wallet: WalletName | undefined;
  session: Session;
  onDecided?: (x: Export) => void;
}) {
  const [asking, setAsking] = useState<'approve' | 'reject' | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (session.role !== 'owner' || x.state !== 'pending') return null;
  const mine = x.requestedBy === `user:${session.address}`;
  const name = wallet ? wallet.label : x.walletId;
  const decide = async (approve: boolean) => {
    setBusy(true);
    setError('');
    try {
      const after = await decideExport(x.walletId, x.id, approve);
      await invalidate(exportKeys.all);
      setAsking(null);
      onDecided?.(after);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="flex flex-wrap items-center gap-2">
      {mine ? (
        <span className="text-sm text-muted">You asked: another owner approves.</span>
      ) : (
        <button type="button" className="btn btn-primary btn-sm min-h-11" onClick={() => setAsking('approve')}>
          Approve…
        </button>
      )}
      <button type="button" className="btn btn-sm min-h-11" onClick={() => setAsking('reject')}>
        {mine ? 'Withdraw…' : 'Reject…'}
      </button>
      <ConfirmDialog
        open={asking !== null}
        title={asking === 'approve' ? `Export the secret of ${name}?` : `Reject the export of ${name}?`}
        confirm={asking === 'approve' ? 'Approve the export' : 'Reject the export'}
        tone={asking === 'approve' ? 'danger' : 'primary'}
        busy={busy}
        error={error}
        onConfirm={() => void decide(asking === 'approve')}
        onClose={() => {
          setAsking(null);
          setError('');
        }}
      >
        {asking === 'approve' ? (
          <p className="m-0">
            The wallet&apos;s secret leaves the service for good, sealed to the key below: whoever holds its private half can spend the wallet&apos;s
            funds, outside every policy. Approve only if you know this key is {actor(x.requestedBy)}&apos;s.
          </p>
        ) : (
          <p className="m-0">Nothing is exported; the request cannot be approved afterwards.</p>
        )}
        <dl className="m-0 grid gap-2">
          <div>
            <dt className="text-sm font-semibold text-muted">Wallet</dt>
            <dd className="m-0 wrap-anywhere">
              {name}
              {wallet && <code className="block text-sm break-all">{wallet.pubkey}</code>}
            </dd>
          </div>
          <div>
            <dt className="text-sm font-semibold text-muted">Asked by</dt>
            <dd className="m-0">
              <code className="text-sm break-all">{x.requestedBy.replace(/^user:/, '')}</code>
            </dd>
          </div>
          <div>
            <dt className="text-sm font-semibold text-muted">Sealed to the recipient key</dt>
            <dd className="m-0">
              <code data-testid="dialog-recipient" className="text-sm break-all">
                {x.recipient}
              </code>
            </dd>
          </div>
        </dl>
      </ConfirmDialog>
    </div>
  );
}
