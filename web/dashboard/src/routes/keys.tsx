import { createFileRoute } from '@tanstack/react-router';
import { KeysPage } from '../pages/keys/KeysPage';
import { keysQuery } from '../services/keys';
import { warm } from '../services/queryClient';
import { walletLabelsQuery } from '../services/wallets';
import { useSession } from '../session';

/** The account's API keys; owners create, rotate and revoke them. */
export const Route = createFileRoute('/keys')({
  beforeLoad: () => ({ keys: { keys: keysQuery(), wallets: walletLabelsQuery() } }),
  loader: ({ context: { queryClient, keys } }) => warm(queryClient.ensureQueryData(keys.keys), queryClient.ensureQueryData(keys.wallets)),
  component: function Keys() {
    return <KeysPage session={useSession()} />;
  },
});
