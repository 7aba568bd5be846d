import { createContext, useContext, useEffect, useState } from 'react';
import { Link, Outlet, RouterProvider, createRootRoute, createRoute, createRouter, lazyRouteComponent, useParams } from '@tanstack/react-router';
import type { RouteComponent } from '@tanstack/react-router';
import { ApiError, type Session, getSession, setCSRF, signOut, switchAccount } from './api';
import { ApprovalPage } from './ApprovalPage';
import { Inbox, usePending } from './Inbox';
import { OverviewPage } from './OverviewPage';
import { SignIn } from './SignIn';
import { TransactionsPage } from './TransactionsPage';
import { errorText } from './format';
import { queryClient } from './queries';

/** Signed is the signed-in person's session and what changes it, for the pages. */
type Signed = { session: Session; adopt: (s: Session) => void; signedOut: () => void };
const SignedContext = createContext<Signed | null>(null);
const useSigned = () => useContext(SignedContext)!;
/** useSession is the signed-in person's session. */
export const useSession = () => useSigned().session;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    getSession()
      .then(adopt)
      .catch(() => setSession(null));
  }, []);

  // A new session (a sign-in, another account) starts from an empty cache:
  // nothing read for the other account stays on screen.
  function adopt(s: Session) {
    queryClient.clear();
    setCSRF(s.csrf_token);
    setSession(s);
  }
  function signedOut() {
    queryClient.clear();
    setSession(null);
  }

  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={adopt} />;
  // Keyed by the account: a switch drops every page of the other account.
  return (
    <SignedContext.Provider key={session.account_id} value={{ session, adopt, signedOut }}>
      <RouterProvider router={router} />
    </SignedContext.Provider>
  );
}

/** Shell is every page's frame: the navigation, the network, the account and the page. */
function Shell() {
  const { session, adopt, signedOut: onSignedOut } = useSigned();
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

  return (
    <>
      <header className={session.network === 'mainnet' ? 'live' : 'test'}>
        <nav aria-label="Main">
          <Link to="/" activeOptions={{ exact: true }}>
            Overview
          </Link>
          <Link to="/approvals">
            Approvals{' '}
            <span className="count" aria-label="pending approvals">
              {pending ? pending.length : '…'}
            </span>
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
      <Outlet />
    </>
  );
}

// The routes, under /dashboard/ (where the api binary serves index.html
// for every path, so a deep link opens its page). Search parameters are
// the pages' state: filters and the selected tab live in the URL.

/** text is a search parameter's value, or undefined when absent or empty. */
const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
/** day is a YYYY-MM-DD search parameter, or undefined. */
const day = (v: unknown) => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : undefined);
/** oneOf is a search parameter among the values allowed, or undefined. */
const oneOf = <T extends string>(v: unknown, allowed: readonly T[]) => (allowed.includes(v as T) ? (v as T) : undefined);

// The pages as routes: each reads its session, params and search itself.
// An id that is not one (the API's forms) shows the overview, as any unknown path.
const APPROVAL_ID = /^ap_[0-9a-f-]+$/;
const UUID = /^[0-9a-f-]{36}$/;
function Home() {
  return <OverviewPage session={useSession()} pending={usePending().pending} />;
}
function Approval() {
  const { id } = useParams({ from: '/approvals/$id' });
  const session = useSession();
  return APPROVAL_ID.test(id) ? <ApprovalPage key={id} id={id} session={session} /> : <Home />;
}
function Transactions() {
  return <TransactionsPage session={useSession()} />;
}

// The pages people rarely open first load on demand, each module in a chunk
// of its own (the analytics page's with Chart.js, the wallets' with the
// policy editor): the first page (the overview, the inbox, an approval)
// downloads only what it shows. The router loads a route's chunk before it
// shows the route, and reloads the app once if a chunk is gone (a newer
// build replaced it). Each is typed RouteComponent: inferred, its type would
// depend on the router's, which depends on it.
const AuditPage: RouteComponent = lazyRouteComponent(() => import('./AuditPage'), 'AuditPage');
const AnalyticsPage: RouteComponent = lazyRouteComponent(() => import('./AnalyticsPage'), 'AnalyticsPage');
const Wallets: RouteComponent = lazyRouteComponent(async () => {
  const { WalletsPage } = await import('./WalletsPage');
  return {
    default: function Wallets() {
      return <WalletsPage session={useSession()} />;
    },
  };
});
const Wallet: RouteComponent = lazyRouteComponent(async () => {
  const { WalletPage } = await import('./WalletPage');
  return {
    default: function Wallet() {
      const { id } = useParams({ from: '/wallets/$id' });
      const session = useSession();
      return UUID.test(id) ? <WalletPage key={id} id={id} session={session} /> : <Home />;
    },
  };
});
const Webhooks: RouteComponent = lazyRouteComponent(async () => {
  const { WebhooksPage } = await import('./WebhooksPage');
  return {
    default: function Webhooks() {
      return <WebhooksPage session={useSession()} />;
    },
  };
});
const Endpoint: RouteComponent = lazyRouteComponent(async () => {
  const { WebhookPage } = await import('./WebhooksPage');
  return {
    default: function Endpoint() {
      const { id } = useParams({ from: '/webhooks/$id' });
      const session = useSession();
      return UUID.test(id) ? <WebhookPage key={id} id={id} session={session} /> : <Home />;
    },
  };
});
const Keys: RouteComponent = lazyRouteComponent(async () => {
  const { KeysPage } = await import('./KeysPage');
  return {
    default: function Keys() {
      return <KeysPage session={useSession()} />;
    },
  };
});
const Users: RouteComponent = lazyRouteComponent(async () => {
  const { UsersPage } = await import('./UsersPage');
  return {
    default: function Users() {
      return <UsersPage session={useSession()} />;
    },
  };
});

const root = createRootRoute({
  component: Shell,
  // An unknown path shows the overview, as the dashboard's home.
  notFoundComponent: Home,
});

// Each route is a constant: inline in addChildren, its path would lose its literal type.
const child = { getParentRoute: () => root };
const overview = createRoute({ ...child, path: '/', component: Home });
const approvals = createRoute({
  ...child,
  path: '/approvals',
  validateSearch: (s: Record<string, unknown>): { tab?: 'decided' } => ({ tab: oneOf(s.tab, ['decided'] as const) }),
  component: Inbox,
});
const approval = createRoute({ ...child, path: '/approvals/$id', component: Approval });
const wallets = createRoute({
  ...child,
  path: '/wallets',
  validateSearch: (s: Record<string, unknown>): { q?: string } => ({ q: text(s.q)?.trim() }),
  component: Wallets,
});
const wallet = createRoute({ ...child, path: '/wallets/$id', component: Wallet });
const transactions = createRoute({
  ...child,
  path: '/transactions',
  validateSearch: (
    s: Record<string, unknown>,
  ): { wallet_id?: string; status?: 'pending' | 'confirmed' | 'failed'; since?: string; until?: string } => ({
    wallet_id: text(s.wallet_id),
    status: oneOf(s.status, ['pending', 'confirmed', 'failed'] as const),
    since: day(s.since),
    until: day(s.until),
  }),
  component: Transactions,
});
const webhooks = createRoute({ ...child, path: '/webhooks', component: Webhooks });
const webhook = createRoute({
  ...child,
  path: '/webhooks/$id',
  validateSearch: (s: Record<string, unknown>): { status?: 'pending' | 'succeeded' | 'failed' } => ({
    status: oneOf(s.status, ['pending', 'succeeded', 'failed'] as const),
  }),
  component: Endpoint,
});
const audit = createRoute({
  ...child,
  path: '/audit',
  validateSearch: (s: Record<string, unknown>): { action?: string; target?: string } => ({
    action: text(s.action)?.trim(),
    target: text(s.target)?.trim(),
  }),
  component: AuditPage,
});
const analytics = createRoute({
  ...child,
  path: '/analytics',
  validateSearch: (s: Record<string, unknown>): { from?: string; to?: string } => ({ from: day(s.from), to: day(s.to) }),
  component: AnalyticsPage,
});
const apiKeys = createRoute({ ...child, path: '/keys', component: Keys });
const users = createRoute({ ...child, path: '/users', component: Users });

const routeTree = root.addChildren([
  overview,
  approvals,
  approval,
  wallets,
  wallet,
  transactions,
  webhooks,
  webhook,
  audit,
  analytics,
  apiKeys,
  users,
]);

/** search is the URL's query as plain strings (no JSON), so links stay readable: ?status=failed&since=2026-01-31. */
const search = {
  parse: (s: string) => Object.fromEntries(new URLSearchParams(s)),
  stringify: (o: Record<string, unknown>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== '') q.set(k, String(v));
    const t = q.toString();
    return t ? `?${t}` : '';
  },
};

export const router = createRouter({ routeTree, basepath: '/dashboard', parseSearch: search.parse, stringifySearch: search.stringify });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
