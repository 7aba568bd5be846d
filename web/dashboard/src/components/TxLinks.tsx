import { Link } from '@tanstack/react-router';
import { explorer } from '../format';
import type { Transaction, TransactionStatus } from '../services/transactions';
import { Status } from './Status';

/** TxStatus is a transaction's status as a badge. */
export function TxStatus({ status }: { status: TransactionStatus }) {
  return <Status status={status} />;
}

/** TxLinks links a transaction on the explorer, and to the approval it came from. */
export function TxLinks({ t, network }: { t: Pick<Transaction, 'signature' | 'approvalId'>; network: string }) {
  return (
    <>
      <a href={explorer(t.signature, network)} target="_blank" rel="noreferrer" className="tap">
        Explorer
      </a>
      {t.approvalId && (
        <>
          {' · '}
          <Link to="/approvals/$id" params={{ id: t.approvalId }} className="tap">
            Approval
          </Link>
        </>
      )}
    </>
  );
}
