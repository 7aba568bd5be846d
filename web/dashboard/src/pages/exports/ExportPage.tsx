import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { CopyButton } from '../../components/CopyButton';
import { SkeletonRows } from '../../components/Skeleton';
import { Time } from '../../components/Time';
import { actor, errorText } from '../../format';
import { exportQuery, walletNameQuery } from '../../services/exports';
import type { Session } from '../../services/session';
import { Decide } from './Decide';
import { ExportStateBadge, Requester } from './ExportsPage';

/**
 * ExportPage is one request to export a wallet's secret: its state, the
 * wallet, who asked and decided, the recipient key, and once exported the
 * sealed secret to copy (only the holder of the recipient key's private
 * half opens it: the owner who asked).
 */
export function ExportPage({ walletId, exportId, session }: { walletId: string; exportId: string; session: Session }) {
  const owner = session.role === 'owner';
  const { data: x, error } = useQuery({ ...exportQuery(walletId, exportId), enabled: owner });
  const { data: wallet } = useQuery({ ...walletNameQuery(walletId), enabled: owner });
  const back = (
    <p className="mb-2">
      <Link to="/exports" className="tap">
        ← All export requests
      </Link>
    </p>
  );
  if (!x) {
    return (
      <main className="page">
        {back}
        <h1>Export request</h1>
        {!owner ? (
          <p className="notice">Only owners read requests to export a wallet&apos;s secret.</p>
        ) : error ? (
          <p role="alert" className="error">
            {errorText(error)}
          </p>
        ) : (
          <SkeletonRows rows={2} height="h-28" />
        )}
      </main>
    );
  }
  const mine = x.requestedBy === `user:${session.address}`;
  return (
    <main className="page">
      {back}
      <h1 className="flex flex-wrap items-center gap-x-3 gap-y-1 wrap-anywhere">
        Export of {wallet?.label ?? 'a wallet'} <ExportStateBadge x={x} />
      </h1>
      {error && <p className="error">Could not refresh: {errorText(error)}</p>}
      <dl className="card mb-4 grid gap-x-6 gap-y-3 sm:grid-cols-2">
        <div className="sm:col-span-2">
          <dt className="text-sm font-semibold text-muted">Wallet</dt>
          <dd className="wrap-anywhere">
            <Link to="/wallets/$id" params={{ id: x.walletId }}>
              {wallet?.label ?? x.walletId}
            </Link>
            {wallet && <code className="block text-sm break-all">{wallet.pubkey}</code>}
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">Asked</dt>
          <dd>
            <Time at={x.requestedAt} /> by <Requester by={x.requestedBy} session={session} />
          </dd>
        </div>
        <div>
          <dt className="text-sm font-semibold text-muted">{x.state === 'void' ? 'Voided' : 'Decided'}</dt>
          <dd>
            {x.decidedAt ? (
              <>
                <Time at={x.decidedAt} /> by {actor(x.decidedBy)}
              </>
            ) : (
              'Not yet: another owner approves or rejects it'
            )}
          </dd>
        </div>
        <div className="sm:col-span-2">
          <dt className="text-sm font-semibold text-muted">Sealed to the recipient key (X25519)</dt>
          <dd>
            <code data-testid="recipient" className="text-sm break-all">
              {x.recipient}
            </code>
          </dd>
        </div>
        {x.voidReason && (
          <div className="sm:col-span-2">
            <dt className="text-sm font-semibold text-muted">Why it is void</dt>
            <dd>{x.voidReason}</dd>
          </div>
        )}
      </dl>
      <Decide x={x} wallet={wallet} session={session} />
      {x.state === 'approved' && <p className="notice">Approved: a worker seals the secret to the recipient key; this page shows it once sealed.</p>}
      {x.sealedSecret && (
        <section className="card mt-4" aria-label="Sealed secret">
          <h2>Sealed secret</h2>
          <p className="notice">
            Sealed <Time at={x.sealedAt} /> with HPKE to the recipient key: only the holder of its private half opens it
            {mine ? ' (you asked for it)' : ` (${actor(x.requestedBy)}, who asked)`}. Open it offline; then move the funds to a new wallet, as this
            one&apos;s secret now exists outside the service for good.
          </p>
          <p className="flex flex-wrap items-start gap-2">
            <code data-testid="sealed-secret" className="min-w-0 flex-[1_1_16rem] text-sm break-all">
              {x.sealedSecret}
            </code>
            <CopyButton text={x.sealedSecret} what="sealed secret" />
          </p>
        </section>
      )}
    </main>
  );
}
