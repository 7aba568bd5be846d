import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, getRouteApi } from '@tanstack/react-router';
import { TabGroup, TabList, Tab, TabPanels, TabPanel } from '@headlessui/react';
import { Address } from '../../components/Address';
import { Empty } from '../../components/Empty';
import { SkeletonRows } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { Time } from '../../components/Time';
import { actor, countdown, money } from '../../format';
import { decidedApprovalsQuery } from '../../services/approvals';
import { QuorumBadge } from './Quorum';
import { usePending } from './usePending';

const route = getRouteApi('/approvals/');

/** Inbox is the approvals waiting for a decision, and those decided (?tab=decided). */
export function Inbox() {
  const { pending, error } = usePending();
  // The tab is in the URL (?tab=decided): a link opens it, and back returns to the other.
  const tab = route.useSearch().tab ?? 'pending';
  const navigate = route.useNavigate();
  const setTab = (t: 'pending' | 'decided') => navigate({ search: t === 'decided' ? { tab: t } : {} });
  const { data: decided } = useQuery({ ...decidedApprovalsQuery(), enabled: tab === 'decided' });
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30000);
    return () => clearInterval(t);
  }, []);

  const list = tab === 'pending' ? pending : (decided ?? null);
  const tabClass =
    'min-h-10 cursor-pointer rounded-md px-4 font-medium text-muted hover:bg-subtle data-selected:bg-accent data-selected:text-on-accent data-selected:hover:bg-accent';
  const shown =
    list === null ? (
      <SkeletonRows rows={3} height="h-24" />
    ) : list.length === 0 ? (
      tab === 'pending' ? (
        <Empty title="Nothing waits for a decision.">
          Sends above a wallet's approval threshold wait here for an owner or approver. Set the threshold in a wallet's policy on the{' '}
          <Link to="/wallets">Wallets</Link> page.
        </Empty>
      ) : (
        <Empty title="No decided approvals yet.">Approvals you or your team approve, reject or let expire are listed here.</Empty>
      )
    ) : (
      <ul className="m-0 grid list-none gap-3 p-0">
        {list.map((a) => (
          <li key={a.id} className="card flex flex-wrap items-center gap-x-4 gap-y-2" data-approval={a.id}>
            <div className="grid min-w-0 flex-[1_1_16rem] gap-1">
              <div className="flex flex-wrap items-baseline gap-x-2">
                <strong className="text-xl tabular-nums">{money(a.amount, a.asset)}</strong>
                <span>
                  from <span className="font-medium">{a.agentLabel}</span> to <Address value={a.to} />
                </span>
              </div>
              {a.memo && <div className="wrap-anywhere">“{a.memo}”</div>}
              <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm text-muted">
                {a.status === 'pending' ? (
                  <>
                    <span>
                      asked <Time at={a.createdAt} now={now} />
                    </span>
                    <span aria-hidden="true">·</span>
                    <span className="font-medium text-warn">expires in {countdown(a.expiresAt, now)}</span>
                    <QuorumBadge a={a} />
                  </>
                ) : (
                  <>
                    <Status status={a.status} /> {a.approvedBy ? `by ${actor(a.approvedBy)}` : ''}
                    {a.rejectedBy ? `by ${actor(a.rejectedBy)}` : ''} · <Time at={a.decidedAt} now={now} />
                    {a.transactionStatus ? ` · transaction ${a.transactionStatus}` : ''}
                  </>
                )}
              </div>
            </div>
            <Link to="/approvals/$id" params={{ id: a.id }} className={`btn max-sm:w-full ${a.status === 'pending' ? 'btn-primary' : ''}`}>
              {a.status === 'pending' ? 'Review' : 'Details'}
            </Link>
          </li>
        ))}
      </ul>
    );
  return (
    <main className="page">
      <h1>Approvals</h1>
      {error && <p className="error">Could not load approvals: {error}</p>}
      <TabGroup selectedIndex={tab === 'decided' ? 1 : 0} onChange={(i) => setTab(i === 1 ? 'decided' : 'pending')}>
        <TabList className="mb-4 inline-flex gap-1 rounded-lg border border-line bg-surface p-1" aria-label="Approvals">
          <Tab className={tabClass}>Pending{pending ? ` (${pending.length})` : ''}</Tab>
          <Tab className={tabClass}>Decided</Tab>
        </TabList>
        <TabPanels>
          <TabPanel>{tab === 'pending' && shown}</TabPanel>
          <TabPanel>{tab === 'decided' && shown}</TabPanel>
        </TabPanels>
      </TabGroup>
    </main>
  );
}
