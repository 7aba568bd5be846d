// The signed-in person's session, for every page: App holds it and what
// changes it (a sign-in, another account, a sign-out).
import { createContext, useContext } from 'react';
import type { Session } from './services/session';

/** Signed is the signed-in person's session and what changes it, for the pages. */
export type Signed = { session: Session; adopt: (s: Session) => void; signedOut: () => void };

export const SignedContext = createContext<Signed | null>(null);

/** useSigned is the session and what changes it. */
export const useSigned = () => useContext(SignedContext)!;

/** useSession is the signed-in person's session. */
export const useSession = () => useSigned().session;
