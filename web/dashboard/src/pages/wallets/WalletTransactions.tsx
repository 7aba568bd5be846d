import { Link } from '@tanstack/react-router';
import { Address } from '../../components/Address';
import { Empty } from '../../components/Empty';
import { Skeleton } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { TxLinks, TxStatus } from '../../components/TxLinks';
import type { Session } from '../../services/session';
import { moved } from '../../services/transactions';
import type { Wallet, WalletActivity } from '../../services/wallets';

/**
 * WalletTransactions is the wallet's latest payments; with none, what to do
 * first (fund it, or give an agent a key). activity is null while unknown,
 * error the read's failure.
 */
export function WalletTransactions({
  agent,
  activity,
  error,
  session,
}: {
  agent: Wallet;
  activity: WalletActivity | null;
  error: string;
  session: Session;
}) {
  return (
    <section className="card mt-4" aria-label="Transactions">
      <h2>Transactions</h2>
      {error && <p className="error">{error}</p>}
      {activity === null ? (
        !error && <Skeleton lines={3} />
      ) : activity.txs.length === 0 ? (
        <Empty title="No transactions yet.">
          {agent.balance && agent.balance.usdc > 0
            ? 'Its agents have sent nothing yet: give one an agent key on the Keys page to start.'
            : 'Fund it first (Receive funds, above); then its agents can send.'}
        </Empty>
      ) : (
        <Table label="Transactions of this wallet" columns={['When', { name: 'Amount', num: true }, 'To / from', 'Status', 'Links']}>
          {activity.txs.map((t) => (
            <tr key={t.id} data-signature={t.signature} className="max-sm:[grid-template-areas:'to_amount'_'when_status'_'links_links']">
              <td className="max-sm:text-muted max-sm:[grid-area:when]">
                <Time at={t.createdAt} />
              </td>
              <td className="num max-sm:font-semibold max-sm:[grid-area:amount]">{moved(t)}</td>
              <td className="max-sm:text-left max-sm:[grid-area:to]">
                <span className={t.direction === 'receive' ? '' : 'sm:hidden'}>{t.direction === 'receive' ? 'from ' : 'to '}</span>
                <Address value={t.counterparty} />
              </td>
              <td className="max-sm:text-right max-sm:[grid-area:status]">
                <TxStatus status={t.status} />
              </td>
              <td className="max-sm:text-right max-sm:[grid-area:links]">
                <TxLinks t={t} network={session.network} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <p className="mb-0">
        <Link to="/transactions" className="tap">
          All transactions
        </Link>
      </p>
    </section>
  );
}
