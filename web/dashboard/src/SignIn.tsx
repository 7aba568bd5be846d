import { useEffect, useState } from 'react';
import type { Wallet } from '@wallet-standard/base';
import type { Session } from './services/session';
import { onWalletsChange, signIn, solanaWallets } from './siws';
import { errorText } from './format';

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [wallets, setWallets] = useState<Wallet[]>(solanaWallets);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  useEffect(() => onWalletsChange(() => setWallets(solanaWallets())), []);

  async function go(w: Wallet) {
    setBusy(w.name);
    setError('');
    try {
      onSignedIn(await signIn(w));
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy('');
    }
  }

  return (
    <main className="page max-w-md pt-[12vh]">
      <div className="card p-6">
        <h1 className="mt-0">Agent Wallet</h1>
        <p>Sign in with the Solana wallet registered as a user of your account.</p>
        {wallets.length === 0 ? (
          <p className="notice">No Solana wallet found in this browser. Install one (Phantom, Backpack, Solflare…) and reload.</p>
        ) : (
          <ul className="m-0 grid list-none gap-2 p-0">
            {wallets.map((w) => (
              <li key={w.name}>
                <button type="button" className="btn w-full justify-start" onClick={() => go(w)} disabled={busy !== ''}>
                  <img src={w.icon} alt="" width={24} height={24} />
                  {busy === w.name ? `Waiting for ${w.name}…` : `Sign in with ${w.name}`}
                </button>
              </li>
            ))}
          </ul>
        )}
        {error && (
          <p role="alert" className="error mt-3 mb-0">
            Sign-in refused: {error}
          </p>
        )}
      </div>
    </main>
  );
}
