import { useEffect, useState } from 'react';
import { type Approval, listApprovals } from './api';
import { actor, countdown, short, usdc, when } from './format';
import { BASE, navigate } from './router';

/** POLL is how often lists refresh themselves. */
export const POLL = 2000;

/** usePending keeps the pending approvals fresh (the inbox and its count). */
export function usePending(): { pending: Approval[] | null; error: string } {
  const [pending, setPending] = useState<Approval[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let stop = false;
    const load = async () => {
      try {
        const { approvals } = await listApprovals('pending');
        if (!stop) {
          setPending(approvals);
          setError('');
        }
      } catch (e) {
        if (!stop) setError(e instanceof Error ? e.message : String(e));
      }
    };
    load();
    const t = setInterval(load, POLL);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, []);
  return { pending, error };
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
  const [decided, setDecided] = useState<Approval[] | null>(null);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30000);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    if (tab !== 'decided') return;
    let stop = false;
    const load = async () => {
      const { approvals } = await listApprovals();
      if (!stop) setDecided(approvals.filter((a) => a.status !== 'pending'));
    };
    load().catch(() => {});
    const t = setInterval(() => load().catch(() => {}), POLL);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, [tab]);

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
