import { createContext, useContext, useEffect, useState } from 'react';
import {
  Link,
  Outlet,
  RouterProvider,
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  useLocation,
  useParams,
} from '@tanstack/react-router';
import type { RouteComponent } from '@tanstack/react-router';
import { ApiError, type Session, getSession, setCSRF, signOut, switchAccount } from './api';
import { ApprovalPage } from './ApprovalPage';
import { Inbox, usePending } from './Inbox';
import { OverviewPage } from './OverviewPage';
import { SignIn } from './SignIn';
import { TransactionsPage } from './TransactionsPage';
import { errorText } from './format';
import { Icon } from './components/Icon';
import { Skeleton } from './components/Skeleton';
import { Toaster } from './components/Toast';
import { queryClient } from './queries';
import { StreamStatus, useLiveStream } from './stream';

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

  if (session === undefined)
    return (
      <div className="page max-w-md pt-[10vh]">
        <Skeleton lines={3} />
      </div>
    );
  if (session === null) return <SignIn onSignedIn={adopt} />;
  // Keyed by the account: a switch drops every page of the other account.
  return (
    <SignedContext.Provider key={session.account_id} value={{ session, adopt, signedOut }}>
      <RouterProvider router={router} />
    </SignedContext.Provider>
  );
}

/** NAV is the main navigation, in the order people use it. */
const NAV = [
  ['/wallets', 'Wallets'],
  ['/transactions', 'Transactions'],
  ['/webhooks', 'Webhooks'],
  ['/audit', 'Audit log'],
  ['/analytics', 'Analytics'],
  ['/keys', 'Keys'],
  ['/users', 'Users'],
] as const;

const navLink =
  'flex min-h-11 items-center gap-2 rounded-md px-3 font-medium text-ink no-underline hover:bg-subtle hover:no-underline aria-[current=page]:bg-accent/12 aria-[current=page]:text-accent';

/** NavLinks are the main navigation's links: a sidebar on wide screens, the menu's panel on phones. */
function NavLinks({ pending }: { pending: number | null }) {
  return (
    <div className="grid gap-0.5">
      <Link to="/" activeOptions={{ exact: true }} className={navLink}>
        Overview
      </Link>
      <Link to="/approvals" className={navLink}>
        Approvals
        <span
          className={`count ml-auto min-w-7 rounded-full px-1.5 text-center text-sm tabular-nums ${pending ? 'bg-accent text-on-accent' : 'bg-subtle text-muted'}`}
        >
          {pending ?? '…'}
        </span>
        <span className="sr-only"> pending</span>
      </Link>
      {NAV.map(([to, name]) => (
        <Link key={to} to={to} className={navLink}>
          {name}
        </Link>
      ))}
    </div>
  );
}

/** Who is the signed-in person, the account switch and sign-out. */
function Who({ session, pick, out }: { session: Session; pick: (id: string) => void; out: () => void }) {
  return (
    <div className="grid gap-2 text-sm">
      {session.accounts.length > 1 && (
        <label className="grid gap-1">
          Account
          <select value={session.account_id} onChange={(e) => pick(e.target.value)} className="w-full">
            {session.accounts.map((m) => (
              <option key={m.account_id} value={m.account_id}>
                {m.network} · {m.role} · {m.account_id.slice(0, 8)}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="flex items-center justify-between gap-2">
        <span title={session.address} className="min-w-0">
          <code>
            {session.address.slice(0, 4)}…{session.address.slice(-4)}
          </code>{' '}
          <span className="text-muted">({session.role})</span>
        </span>
        <button type="button" className="btn btn-sm" onClick={out}>
          Sign out
        </button>
      </div>
    </div>
  );
}

/** Shell is every page's frame: the navigation, the network, the account and the page. */
function Shell() {
  const { session, adopt, signedOut: onSignedOut } = useSigned();
  const { pending, error } = usePending();
  // One event stream per signed-in session: this frame unmounts on a sign-out or an account switch.
  const stream = useLiveStream();
  const [failure, setFailure] = useState('');
  // On phones the navigation is a menu the button opens; a new page closes it.
  const [menu, setMenu] = useState(false);
  const path = useLocation({ select: (l) => l.pathname });
  const [shownPath, setShownPath] = useState(path);
  if (shownPath !== path) {
    setShownPath(path);
    setMenu(false);
  }
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

  const live = session.network === 'mainnet';
  const count = pending ? pending.length : null;
  const brand = (
    <Link to="/" className="font-semibold tracking-tight text-ink no-underline hover:no-underline">
      Agent Wallet
    </Link>
  );
  return (
    <div className="min-h-dvh lg:grid lg:grid-cols-[15rem_minmax(0,1fr)]">
      <a href="#content" className="sr-only z-50 rounded-md bg-surface px-3 py-2 focus:not-sr-only focus:fixed focus:top-2 focus:left-2">
        Skip to content
      </a>
      <div className="hidden border-r border-line bg-surface lg:block">
        <aside className="sticky top-0 flex h-dvh flex-col gap-4 overflow-y-auto p-3">
          <div className="px-3 pt-2 text-lg">{brand}</div>
          <nav aria-label="Main">
            <NavLinks pending={count} />
          </nav>
          <div className="mt-auto border-t border-line pt-3">
            <Who session={session} pick={pick} out={out} />
          </div>
        </aside>
      </div>
      <div className="min-w-0">
        <header
          className={`sticky top-0 z-40 flex items-center gap-3 border-b-4 bg-surface/95 px-3 py-2 backdrop-blur lg:px-6 ${live ? 'border-live' : 'border-ok'}`}
        >
          {/* On phones the navigation is a menu: a button that shows and hides its panel (a disclosure). */}
          <nav aria-label="Main" className="lg:hidden" onKeyDown={(e) => e.key === 'Escape' && setMenu(false)}>
            <button type="button" className="btn btn-sm min-h-11" aria-expanded={menu} aria-controls="menu" onClick={() => setMenu(!menu)}>
              <Icon name={menu ? 'cross' : 'menu'} className="size-5" />
              Menu
              {count ? <span className="rounded-full bg-accent px-1.5 text-xs text-on-accent tabular-nums">{count}</span> : null}
            </button>
            {menu && (
              <div
                id="menu"
                className="absolute inset-x-0 top-full max-h-[calc(100dvh-4rem)] overflow-y-auto border-b border-line bg-surface p-3 shadow-lg"
              >
                <NavLinks pending={count} />
                <div className="mt-3 border-t border-line pt-3">
                  <Who session={session} pick={pick} out={out} />
                </div>
              </div>
            )}
          </nav>
          <div className="hidden sm:block lg:hidden">{brand}</div>
          <StreamStatus status={stream} />
          <div
            role="status"
            className={`rounded-full px-3 py-0.5 text-sm font-semibold whitespace-nowrap ${live ? 'bg-live text-on-live' : 'bg-ok-soft text-ok'}`}
          >
            {live ? 'Mainnet: real money' : 'Devnet: test tokens'}
          </div>
        </header>
        {failure && (
          <p role="alert" className="error mx-4 mt-3">
            {failure}
          </p>
        )}
        <div id="content" tabIndex={-1} className="outline-none">
          <Outlet />
        </div>
      </div>
      <Toaster />
    </div>
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
