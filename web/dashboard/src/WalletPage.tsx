import type { Session } from './api';

/** WalletPage is one wallet (being built). */
export function WalletPage(_: { id: string; session: Session }) {
  return (
    <main>
      <h1>Wallet</h1>
    </main>
  );
}
