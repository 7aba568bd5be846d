import { createFileRoute } from '@tanstack/react-router';
import { Home } from '../../pages/overview/Home';
import { WalletPage } from '../../pages/wallets/WalletPage';
import { warm } from '../../services/queryClient';
import { walletActivityQuery, walletQuery } from '../../services/wallets';
import { useSession } from '../../session';
import { walletParams } from './$id.schema';

/** A wallet: its address, balance, state, policy and what happened to it. */
export const Route = createFileRoute('/wallets/$id')({
  params: walletParams,
  beforeLoad: ({ params: { id } }) => ({ wallet: id ? { wallet: walletQuery(id), activity: walletActivityQuery(id) } : null }),
  // Its history is read once the wallet is (it follows the policy and state shown).
  loader: ({ context: { queryClient, wallet } }) => {
    if (wallet) warm(queryClient.ensureQueryData(wallet.wallet), queryClient.ensureQueryData(wallet.activity));
  },
  component: function Wallet() {
    const { id } = Route.useParams();
    const session = useSession();
    return id ? <WalletPage key={id} id={id} session={session} /> : <Home />;
  },
});
