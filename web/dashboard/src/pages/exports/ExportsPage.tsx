import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Address } from '../../components/Address';
import { Empty } from '../../components/Empty';
import { SkeletonRows } from '../../components/Skeleton';
import { Status, type Tone } from '../../components/Status';
import { Time } from '../../components/Time';
import { errorText } from '../../format';
import { EXPORT_STATES, type Export, type ExportState, exportsQuery, pendingFirst, walletNameQuery } from '../../services/exports';
import type { Session } from '../../services/session';
import { Decide } from './Decide';

/** STATE_TONES show a request's state: done (exported), waiting (pending, approved), closed (rejected, void). */
const STATE_TONES: Record<ExportState, Tone> = { pending: 'warn', approved: 'warn', exported: 'ok', rejected: 'bad', void: 'bad' };

/** ExportStateBadge shows a request's state as a badge; approved says it waits for a worker. */
export function ExportStateBadge({ x }: { x: Export }) {
  const label = x.state === 'approved' ? 'approved, sealing' : x.state;
  return <Status status={x.state} label={label} tone={STATE_TONES[x.state]} testId="export-state" data-state={x.state} />;
}

/** Requester names the owner who asked: their address, and "you" when it is the reader. */
export function Requester({ by, session }: { by: string; session: Session }) {
  const address = by.replace(/^user:/, '');
  return address === session.address ? (
    <span>
      you (<Address value={address} />)
    </span>
  ) : (
    <Address value={address} />
  );
}

/** ExportRow is one request in the list: its wallet, who asked, the recipient key, its state and the decision. */
function ExportRow({ x, session }: { x: Export; session: Session }) {
  const { data: wallet } = useQuery(walletNameQuery(x.walletId));
  return (
    <li className="card grid gap-3" data-export={x.id}>
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <ExportStateBadge x={x} />
        <strong className="wrap-anywhere">
          <Link to="/wallets/$id" params={{ id: x.walletId }}>
            {wallet?.label ?? 'Wallet'}
          </Link>
        </strong>
        {wallet && <Address value={wallet.pubkey} />}
        <span className="text-sm text-muted">
          asked <Time at={x.requestedAt} /> by <Requester by={x.requestedBy} session={session} />
        </span>
      </div>
      <div className="grid gap-1">
        <span className="text-sm font-semibold text-muted">Sealed to the recipient key</span>
        <code data-testid="recipient" className="text-sm break-all">
          {x.recipient}
        </code>
      </div>
      {x.voidReason && <p className="m-0 text-sm text-muted">Void: {x.voidReason}</p>}
      <div className="flex flex-wrap items-center justify-between gap-2">
        <Decide x={x} wallet={wallet} session={session} />
        <Link to="/exports/$walletId/$exportId" params={{ walletId: x.walletId, exportId: x.id }} className="btn btn-sm min-h-11 max-sm:w-full">
          Details
        </Link>
      </div>
    </li>
  );
}

/**
 * ExportsPage lists the requests to export a wallet's secret, pending
 * first (or those in one state, ?state=…): for each, the wallet, who
 * asked, the key the secret would be sealed to, and the decision.
 */
export function ExportsPage({
  session,
  state,
  onState,
}: {
  session: Session;
  /** The state shown (?state=…); undefined: all, pending first. */
  state?: ExportState;
  onState: (s: ExportState | undefined) => void;
}) {
  const owner = session.role === 'owner';
  const list = useQuery({ ...exportsQuery(state), enabled: owner });
  if (!owner) {
    return (
      <main className="page">
        <h1>Exports</h1>
        <p className="notice">Only owners read and decide requests to export a wallet&apos;s secret.</p>
      </main>
    );
  }
  const shown = list.data ? (state ? list.data : pendingFirst(list.data)) : null;
  return (
    <main className="page">
      <h1>Exports</h1>
      <p className="notice">
        A wallet&apos;s secret leaves the service only when one owner asks for it, sealed to a key they hold, and another owner approves. An owner who
        approves must have been an owner before the request and not added by the owner who asked. Ask from a wallet&apos;s page.
      </p>
      <form className="card filters" aria-label="Filter export requests" onSubmit={(e) => e.preventDefault()}>
        <label>
          State{' '}
          <select value={state ?? ''} onChange={(e) => onState((e.target.value || undefined) as ExportState | undefined)}>
            <option value="">All, pending first</option>
            {EXPORT_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      {list.error && (
        <p role="alert" className="error">
          {errorText(list.error)}
        </p>
      )}
      {shown === null ? (
        !list.error && <SkeletonRows rows={2} height="h-32" />
      ) : shown.length === 0 ? (
        <Empty title={state ? `No ${state} export requests.` : 'No export requests yet.'}>
          An owner asks for a wallet&apos;s secret on the wallet&apos;s page; the request waits here for another owner.
        </Empty>
      ) : (
        <ul className="m-0 grid list-none gap-3 p-0" aria-label="Export requests">
          {shown.map((x) => (
            <ExportRow key={x.id} x={x} session={session} />
          ))}
        </ul>
      )}
    </main>
  );
}
