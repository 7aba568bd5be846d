import type { Session } from '../../services/session';

/** Who is the signed-in person, the account switch and sign-out. */
export function Who({ session, pick, out }: { session: Session; pick: (id: string) => void; out: () => void }) {
  return (
    <div className="grid gap-2 text-sm">
      {session.accounts.length > 1 && (
        <label className="grid gap-1">
          Account
          <select value={session.accountId} onChange={(e) => pick(e.target.value)} className="w-full">
            {session.accounts.map((m) => (
              <option key={m.accountId} value={m.accountId}>
                {m.network} · {m.role} · {m.accountId.slice(0, 8)}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="flex items-center justify-between gap-2">
        <span title={session.address} className="min-w-0">
          <code>
            {session.address.slice(0, 4)}…{session.address.slice(-4)}
          </code>{' '}
          <span className="text-muted">({session.role})</span>
        </span>
        <button type="button" className="btn btn-sm" onClick={out}>
          Sign out
        </button>
      </div>
    </div>
  );
}
