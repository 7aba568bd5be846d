import type { Session } from './api';

/** WalletsPage lists the account's wallets (being built). */
export function WalletsPage(_: { session: Session }) {
  return (
    <main>
      <h1>Wallets</h1>
    </main>
  );
}
