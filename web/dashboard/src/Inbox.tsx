import { useEffect, useState } from 'react';
import { type Approval, listApprovals } from './api';
import { actor, countdown, short, usdc, when } from './format';
import { usePoll } from './poll';
import { BASE, navigate } from './router';

/** usePending keeps the pending approvals fresh (the inbox and its count). */
export function usePending(): { pending: Approval[] | null; error: string } {
  const { data, error } = usePoll(async () => (await listApprovals('pending')).approvals, []);
  return { pending: data, error };
}

function Link({ to, children }: { to: string; children: React.ReactNode }) {
  return (
    <a
      href={BASE + to}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

export function Inbox({ pending, error }: { pending: Approval[] | null; error: string }) {
  const [tab, setTab] = useState<'pending' | 'decided'>('pending');
  const { data: decided } = usePoll(
    async () => (tab === 'decided' ? (await listApprovals()).approvals.filter((a) => a.status !== 'pending') : null),
    [tab],
  );
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30000);
    return () => clearInterval(t);
  }, []);

  const list = tab === 'pending' ? pending : decided;
  return (
    <main>
      <h1>Approvals</h1>
      <div role="tablist" className="tabs">
        <button role="tab" aria-selected={tab === 'pending'} onClick={() => setTab('pending')}>
          Pending{pending ? ` (${pending.length})` : ''}
        </button>
        <button role="tab" aria-selected={tab === 'decided'} onClick={() => setTab('decided')}>
          Decided
        </button>
      </div>
      {error && <p className="error">Could not load approvals: {error}</p>}
      {list === null ? (
        <p>Loading…</p>
      ) : list.length === 0 ? (
        <p className="notice">{tab === 'pending' ? 'Nothing waits for a decision.' : 'No decided approvals yet.'}</p>
      ) : (
        <ul className="approvals">
          {list.map((a) => (
            <li key={a.id} className={`approval ${a.status}`} data-approval={a.id}>
              <div className="line">
                <strong>{usdc(a.amount)}</strong> from <span>{a.agent_label}</span> to <code title={a.to}>{short(a.to)}</code>
              </div>
              {a.memo && <div className="memo">“{a.memo}”</div>}
              <div className="meta">
                {a.status === 'pending' ? (
                  <>asked {when(a.created_at)} · expires in {countdown(a.expires_at, now)}</>
                ) : (
                  <>
                    <span className={`badge ${a.status}`}>{a.status}</span> {a.approved_by ? `by ${actor(a.approved_by)}` : ''}
                    {a.rejected_by ? `by ${actor(a.rejected_by)}` : ''} · {when(a.decided_at)}
                    {a.transaction_status ? ` · transaction ${a.transaction_status}` : ''}
                  </>
                )}
              </div>
              <Link to={`/approvals/${a.id}`}>{a.status === 'pending' ? 'Review' : 'Details'}</Link>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}

export { Link };
