import { useEffect, useState } from 'react';
import { Link, Outlet, useLocation } from '@tanstack/react-router';
import { Icon } from '../../components/Icon';
import { Toaster } from '../../components/Toast';
import { errorText } from '../../format';
import { ApiError } from '../../services/api';
import { signOut, switchAccount } from '../../services/session';
import { useSigned } from '../../session';
import { StreamStatus, useLiveStream } from '../../stream';
import { usePending } from '../approvals/usePending';
import { NavLinks } from './NavLinks';
import { Who } from './Who';

/** Shell is every page's frame: the navigation, the network, the account and the page. */
export function Shell() {
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
            <NavLinks pending={count} owner={session.role === 'owner'} />
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
                <NavLinks pending={count} owner={session.role === 'owner'} />
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
