import { Address } from '../../components/Address';
import { Status } from '../../components/Status';
import { Time } from '../../components/Time';
import { type Transaction, moved } from '../../services/transactions';

/**
 * TxRow is a transaction in one line: amount, status, wallet and recipient,
 * memo, time. On a phone it is the transactions page's card: who paid whom
 * beside the amount, the memo beside the status, then when.
 */
export function TxRow({ t, wallet }: { t: Transaction; wallet: string }) {
  return (
    <li
      data-signature={t.signature}
      className="flex min-w-0 flex-wrap items-baseline gap-x-3 gap-y-1 border-b border-line py-2 last:border-0 max-sm:grid max-sm:grid-cols-[minmax(0,1fr)_auto] max-sm:items-start max-sm:gap-y-0.5 max-sm:[grid-template-areas:'who_amount'_'memo_status'_'when_when']"
    >
      <strong className="min-w-28 text-right whitespace-nowrap tabular-nums max-sm:min-w-0 max-sm:[grid-area:amount]">{moved(t)}</strong>
      <Status status={t.status} className="max-sm:justify-self-end max-sm:[grid-area:status]" />
      <span className="min-w-0 wrap-anywhere max-sm:[grid-area:who]">
        {t.direction === 'receive' ? (
          <>
            {wallet} from <Address value={t.counterparty} />
          </>
        ) : (
          <>
            {wallet} to <Address value={t.counterparty} />
          </>
        )}
      </span>
      {t.memo && <span className="memo min-w-0 wrap-anywhere text-muted max-sm:[grid-area:memo]">“{t.memo}”</span>}
      <Time at={t.createdAt} className="basis-full text-sm text-muted max-sm:[grid-area:when] sm:ml-auto sm:basis-auto" />
    </li>
  );
}
