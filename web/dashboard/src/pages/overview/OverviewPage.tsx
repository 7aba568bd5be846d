import { Link } from '@tanstack/react-router';
import { Empty } from '../../components/Empty';
import { SkeletonRows } from '../../components/Skeleton';
import { short } from '../../format';
import type { Analytics } from '../../services/analytics';
import type { Approval } from '../../services/approvals';
import { WALLETS_SHOWN } from '../../services/overview';
import type { Session } from '../../services/session';
import { DepositMinimums } from './DepositMinimums';
import { FeePayerCard } from './FeePayerCard';
import { Glance } from './Glance';
import { LowSol } from './LowSol';
import { Network } from './Network';
import { Pending } from './Pending';
import { SponsorOn } from './SponsorOn';
import { TxRow } from './TxRow';
import { useOverview } from './useOverview';
import { WalletCard } from './WalletCard';

/** spentToday is a wallet's spend on the analytics' (single) day, or null when unknown. */
function spentToday(a: Analytics | null, id: string): number | null {
  if (!a) return null;
  return a.spend.filter((s) => s.wallet_id === id && s.day === a.to).reduce((n, s) => n + s.amount_usdc, 0);
}

/** OverviewPage is the account at a glance: what needs me now, what was spent today against the limits, what failed. */
export function OverviewPage({ session, pending }: { session: Session; pending: Approval[] | null }) {
  const o = useOverview();
  const wallets = o.wallets.data?.wallets ?? null;
  const label = new Map((wallets ?? []).map((a) => [a.id, a.label]));
  // With fee sponsorship on, the wallets' SOL pays nothing: the fee payer's
  // card (and its warning) stands in for the per-wallet list.
  const fp = o.feePayer.data;
  const sponsored = fp !== null && fp.enabled;

  return (
    <main className="page">
      <div className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2">
        <h1 className="mb-2">Overview</h1>
        <p className="m-0 flex items-center gap-3 text-sm text-muted">
          {o.updated ? (
            `Updated ${o.updated.toISOString().slice(11, 19)} UTC`
          ) : (
            <span className="skeleton inline-block h-4 w-32" aria-hidden="true" />
          )}
          {/* Never disabled: a disabled button would drop the keyboard's focus; a click mid-round starts over. */}
          <button type="button" className="btn btn-sm" onClick={o.refresh} aria-busy={o.busy}>
            {o.busy ? 'Refreshing…' : 'Refresh'}
          </button>
        </p>
      </div>

      <Network network={session.network} />

      <Glance pending={pending} wallets={wallets} spend={o.spend.data} failed={o.failed.data} />

      <div className="mt-4 grid items-start gap-4 md:grid-cols-2">
        <Pending pending={pending} />

        {sponsored ? (
          <FeePayerCard fp={fp} error={o.feePayer.error} session={session} onChange={o.refresh} />
        ) : (
          <LowSol wallets={wallets} failed={o.wallets.error !== ''} balances={o.balances}>
            {session.role === 'owner' && fp !== null && <SponsorOn onChange={o.refresh} />}
          </LowSol>
        )}
      </div>

      <section className="card mt-4" aria-labelledby="ov-wallets">
        <h2 id="ov-wallets">Wallets</h2>
        {o.wallets.error && <p className="error">Could not load wallets: {o.wallets.error}</p>}
        {o.spend.error && <p className="error">Could not load today's spend: {o.spend.error}</p>}
        {wallets === null ? (
          !o.wallets.error && <SkeletonRows rows={2} height="h-28" />
        ) : wallets.length === 0 ? (
          <Empty title="No wallets yet: create one on the Wallets page (or with POST /agents).">
            Each wallet has its own address, balance and policy. <Link to="/wallets">Go to Wallets</Link>
          </Empty>
        ) : (
          <ul className="m-0 grid list-none grid-cols-[repeat(auto-fill,minmax(min(100%,16rem),1fr))] gap-3 p-0" aria-label="Wallets">
            {wallets.map((a) => (
              <WalletCard key={a.id} wallet={a} read={o.balances.get(a.id)} spent={spentToday(o.spend.data, a.id)} sponsored={sponsored} />
            ))}
          </ul>
        )}
        <p className="mt-3 mb-0">
          {o.wallets.data?.more && `Showing the newest ${WALLETS_SHOWN}. `}
          <Link to="/wallets" className="tap">
            All wallets
          </Link>
        </p>
      </section>

      <section className="card mt-4" aria-labelledby="ov-txs">
        <h2 id="ov-txs">Recent transactions</h2>
        {o.txs.error && <p className="error">Could not load transactions: {o.txs.error}</p>}
        {o.txs.data === null ? (
          !o.txs.error && <SkeletonRows rows={3} height="h-10" />
        ) : o.txs.data.length === 0 ? (
          <Empty title="No transactions yet.">Payments your agents send appear here as they go out.</Empty>
        ) : (
          <ul className="m-0 list-none p-0" aria-label="Recent transactions">
            {o.txs.data.map((t) => (
              <TxRow key={t.id} t={t} wallet={label.get(t.walletId) ?? short(t.walletId)} />
            ))}
          </ul>
        )}
        <p className="mt-3 mb-0">
          <Link to="/transactions" className="tap">
            All transactions
          </Link>
        </p>
      </section>

      <DepositMinimums session={session} />
    </main>
  );
}
