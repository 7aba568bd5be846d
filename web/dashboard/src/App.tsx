import { useEffect, useState } from 'react';
import { ApiError, type Session, getSession, setCSRF, signOut, switchAccount } from './api';
import { ApprovalPage } from './ApprovalPage';
import { AnalyticsPage } from './AnalyticsPage';
import { AuditPage } from './AuditPage';
import { Inbox, Link, usePending } from './Inbox';
import { KeysPage } from './KeysPage';
import { OverviewPage } from './OverviewPage';
import { SignIn } from './SignIn';
import { TransactionsPage } from './TransactionsPage';
import { UsersPage } from './UsersPage';
import { WalletPage } from './WalletPage';
import { WalletsPage } from './WalletsPage';
import { WebhookPage, WebhooksPage } from './WebhooksPage';
import { usePath } from './router';
import { errorText } from './format';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    getSession()
      .then(adopt)
      .catch(() => setSession(null));
  }, []);

  function adopt(s: Session) {
    setCSRF(s.csrf_token);
    setSession(s);
  }

  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={adopt} />;
  // Keyed by the account: a switch drops every list of the other account.
  return <Signed key={session.account_id} session={session} adopt={adopt} onSignedOut={() => setSession(null)} />;
}

function Signed({ session, adopt, onSignedOut }: { session: Session; adopt: (s: Session) => void; onSignedOut: () => void }) {
  const path = usePath();
  const { pending, error } = usePending();
  const [failure, setFailure] = useState('');
  useEffect(() => {
    if (error.includes('Unauthorized')) onSignedOut();
  }, [error, onSignedOut]);

  async function out() {
    try {
      await signOut();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) {
        setFailure(errorText(e));
        return;
      }
    }
    onSignedOut();
  }

  async function pick(accountID: string) {
    try {
      adopt(await switchAccount(accountID));
    } catch (e) {
      setFailure(errorText(e));
    }
  }

  const approval = path.match(/^\/approvals\/(ap_[0-9a-f-]+)$/);
  const wallet = path.match(/^\/wallets\/([0-9a-f-]{36})$/);
  const endpoint = path.match(/^\/webhooks\/([0-9a-f-]{36})$/);
  return (
    <>
      <header className={session.network === 'mainnet' ? 'live' : 'test'}>
        <nav aria-label="Main">
          <Link to="/">Overview</Link>
          <Link to="/approvals">
            Approvals <span className="count" aria-label="pending approvals">{pending ? pending.length : '…'}</span>
          </Link>
          <Link to="/wallets">Wallets</Link>
          <Link to="/transactions">Transactions</Link>
          <Link to="/webhooks">Webhooks</Link>
          <Link to="/audit">Audit log</Link>
          <Link to="/analytics">Analytics</Link>
          <Link to="/keys">Keys</Link>
          <Link to="/users">Users</Link>
        </nav>
        <div className="network" role="status">
          {session.network === 'mainnet' ? 'Mainnet: real money' : 'Devnet: test tokens'}
        </div>
        {session.accounts.length > 1 && (
          <label className="account">
            Account{' '}
            <select value={session.account_id} onChange={(e) => pick(e.target.value)}>
              {session.accounts.map((m) => (
                <option key={m.account_id} value={m.account_id}>
                  {m.network} · {m.role} · {m.account_id.slice(0, 8)}
                </option>
              ))}
            </select>
          </label>
        )}
        <div className="who">
          <span title={session.address}>
            {session.address.slice(0, 4)}…{session.address.slice(-4)} ({session.role})
          </span>
          <button type="button" onClick={out}>
            Sign out
          </button>
        </div>
      </header>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {approval ? (
        <ApprovalPage key={approval[1]} id={approval[1]} session={session} />
      ) : wallet ? (
        <WalletPage key={wallet[1]} id={wallet[1]} session={session} />
      ) : endpoint ? (
        <WebhookPage key={endpoint[1]} id={endpoint[1]} session={session} />
      ) : path === '/approvals' ? (
        <Inbox pending={pending} error={error} />
      ) : path === '/wallets' ? (
        <WalletsPage session={session} />
      ) : path === '/webhooks' ? (
        <WebhooksPage session={session} />
      ) : path === '/transactions' ? (
        <TransactionsPage session={session} />
      ) : path === '/audit' ? (
        <AuditPage />
      ) : path === '/analytics' ? (
        <AnalyticsPage />
      ) : path === '/keys' ? (
        <KeysPage session={session} />
      ) : path === '/users' ? (
        <UsersPage session={session} />
      ) : (
        <OverviewPage session={session} pending={pending} />
      )}
    </>
  );
}
