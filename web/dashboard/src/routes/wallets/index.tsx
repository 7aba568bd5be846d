import { createFileRoute } from '@tanstack/react-router';
import { WalletsPage } from '../../pages/wallets/WalletsPage';
import { warmList } from '../../services/queryClient';
import { walletsQuery } from '../../services/wallets';
import { useSession } from '../../session';
import { walletsSearch } from './index.schema';

/** The wallets, searchable by label or address (?q=…); owners create new ones. */
export const Route = createFileRoute('/wallets/')({
  validateSearch: walletsSearch,
  loaderDeps: ({ search }) => ({ q: search.q ?? '' }),
  beforeLoad: ({ search }) => ({ wallets: walletsQuery(search.q ?? '') }),
  loader: ({ context: { wallets } }) => warmList(wallets),
  component: function Wallets() {
    return <WalletsPage session={useSession()} />;
  },
});
