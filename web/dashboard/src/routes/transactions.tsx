import { createFileRoute } from '@tanstack/react-router';
import { TransactionsPage } from '../pages/transactions/TransactionsPage';
import { warm, warmList } from '../services/queryClient';
import { transactionsQuery } from '../services/transactions';
import { walletLabelsQuery } from '../services/wallets';
import { useSession } from '../session';
import { filterOf, transactionsSearch } from './transactions.schema';

/** The transactions, newest first, filtered by the URL (?status=…&since=…): a link is the filtered list. */
export const Route = createFileRoute('/transactions')({
  codeSplitGroupings: [],
  validateSearch: transactionsSearch,
  loaderDeps: ({ search }) => filterOf(search),
  beforeLoad: ({ search }) => ({ transactions: { list: transactionsQuery(filterOf(search)), wallets: walletLabelsQuery() } }),
  loader: ({ context: { queryClient, transactions } }) => {
    warm(queryClient.ensureQueryData(transactions.wallets));
    warmList(transactions.list);
  },
  component: function Transactions() {
    return <TransactionsPage session={useSession()} />;
  },
});
