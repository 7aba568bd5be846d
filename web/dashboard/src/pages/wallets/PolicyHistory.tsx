import { Skeleton } from '../../components/Skeleton';
import { Time } from '../../components/Time';
import { actor } from '../../format';
import type { AuditEntry } from '../../services/audit';
import type { Policy } from '../../services/wallets';
import { Diff } from './policy/Diff';
import { changesOf } from './policy/policy-draft';

const isPolicy = (v: unknown): v is Policy => typeof v === 'object' && v !== null && Array.isArray((v as Policy).allowlist);

/** HistoryEntry says who changed what: a policy's changes old → new, or a freeze or unfreeze. */
function HistoryEntry({ e }: { e: AuditEntry }) {
  const d = (e.details ?? {}) as { before?: unknown; after?: unknown };
  const changes = e.action === 'policy.updated' && isPolicy(d.before) && isPolicy(d.after) ? changesOf(d.before, d.after) : null;
  const what =
    e.action === 'wallet.frozen'
      ? 'froze the wallet'
      : e.action === 'wallet.unfrozen'
        ? 'unfroze the wallet'
        : changes?.length
          ? 'changed the policy:'
          : 'saved the policy';
  return (
    <li data-action={e.action} data-actor={e.actor} className="border-b border-line pb-2 last:border-0">
      <p className="m-0">
        <strong title={e.actor}>{actor(e.actor)}</strong> {what} <Time at={e.at} className="block text-sm text-muted" />
      </p>
      {changes && changes.length > 0 && <Diff changes={changes} />}
    </li>
  );
}

/** PolicyHistory is who changed the wallet's policy or froze it, newest first; null while unknown, error the read's failure. */
export function PolicyHistory({ history, error }: { history: AuditEntry[] | null; error: string }) {
  return (
    <section className="card mt-4" aria-label="Policy history">
      <h2>Policy history</h2>
      {error && <p className="error">Could not load the history: {error}</p>}
      {history === null ? (
        !error && <Skeleton lines={2} />
      ) : history.length === 0 ? (
        <p className="notice">No changes since the wallet was created.</p>
      ) : (
        <ol className="m-0 grid list-none gap-2 p-0">
          {history.map((e) => (
            <HistoryEntry key={e.id} e={e} />
          ))}
        </ol>
      )}
    </section>
  );
}
