// A tiny history router for the dashboard's few pages, all under /dashboard/.
import { useEffect, useState } from 'react';

export const BASE = '/dashboard';

export function navigate(path: string) {
  window.history.pushState(null, '', BASE + path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** usePath is the current path below /dashboard (always starting with /). */
export function usePath(): string {
  const read = () => window.location.pathname.replace(/^\/dashboard/, '') || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const on = () => setPath(read());
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return path;
}
