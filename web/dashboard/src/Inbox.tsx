import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type Approval, listApprovals } from './api';
import { actor, countdown, errorText, short, usdc, when } from './format';
import { keys, poll } from './queries';
import { QuorumBadge } from './Quorum';

/** usePending keeps the pending approvals fresh (the inbox and its count). */
export function usePending(): { pending: Approval[] | null; error: string } {
  const { data, error } = useQuery({ queryKey: keys.pending, queryFn: async () => (await listApprovals('pending')).approvals, ...poll() });
  return { pending: data ?? null, error: error ? errorText(error) : '' };
}

export function Inbox() {
  const { pending, error } = usePending();
  // The tab is in the URL (?tab=decided): a link opens it, and back returns to the other.
  const tab = useSearch({ from: '/approvals' }).tab ?? 'pending';
  const navigate = useNavigate({ from: '/approvals' });
  const setTab = (t: 'pending' | 'decided') => navigate({ search: t === 'decided' ? { tab: t } : {} });
  const { data: decided } = useQuery({
    queryKey: keys.decided,
    queryFn: async () => (await listApprovals()).approvals.filter((a) => a.status !== 'pending'),
    enabled: tab === 'decided',
    ...poll(),
  });
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30000);
    return () => clearInterval(t);
  }, []);

  const list = tab === 'pending' ? pending : (decided ?? null);
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
                  <>
                    asked {when(a.created_at)} · expires in {countdown(a.expires_at, now)}
                    <QuorumBadge a={a} />
                  </>
                ) : (
                  <>
                    <span className={`badge ${a.status}`}>{a.status}</span> {a.approved_by ? `by ${actor(a.approved_by)}` : ''}
                    {a.rejected_by ? `by ${actor(a.rejected_by)}` : ''} · {when(a.decided_at)}
                    {a.transaction_status ? ` · transaction ${a.transaction_status}` : ''}
                  </>
                )}
              </div>
              <Link to="/approvals/$id" params={{ id: a.id }}>
                {a.status === 'pending' ? 'Review' : 'Details'}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
