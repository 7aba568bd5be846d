import { useEffect, useState } from 'react';
import { RouterProvider } from '@tanstack/react-router';
import { Skeleton } from './components/Skeleton';
import { router } from './router';
import { queryClient } from './services/queryClient';
import { type Session, getSession } from './services/session';
import { setCSRF } from './services/api';
import { SignedContext } from './session';
import { SignIn } from './SignIn';

/**
 * App is the dashboard: the sign-in until a session exists, then the pages
 * (the router) of the session's account.
 */
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
    setCSRF(s.csrfToken);
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
    <SignedContext.Provider key={session.accountId} value={{ session, adopt, signedOut }}>
      <RouterProvider router={router} />
    </SignedContext.Provider>
  );
}
