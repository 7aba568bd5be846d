import { Status } from '../../components/Status';
import type { WalletState } from '../../services/wallets';

/** StateBadge is a wallet's state, wherever the wallet appears. */
export function StateBadge({ state }: { state: WalletState }) {
  return <Status status={state} testId="state" className="align-middle text-sm" />;
}
