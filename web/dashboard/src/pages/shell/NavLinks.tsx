import { Link } from '@tanstack/react-router';

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

/** OWNERS_NAV are the pages only owners use: the requests to export a wallet's secret. */
const OWNERS_NAV = [['/exports', 'Exports']] as const;

const navLink =
  'flex min-h-11 items-center gap-2 rounded-md px-3 font-medium text-ink no-underline hover:bg-subtle hover:no-underline aria-[current=page]:bg-accent/12 aria-[current=page]:text-accent';

/**
 * NavLinks are the main navigation's links: a sidebar on wide screens, the
 * menu's panel on phones. pending is the approvals waiting (null while
 * unknown); owner adds the owners' pages.
 */
export function NavLinks({ pending, owner = false }: { pending: number | null; owner?: boolean }) {
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
      {[...NAV, ...(owner ? OWNERS_NAV : [])].map(([to, name]) => (
        <Link key={to} to={to} className={navLink}>
          {name}
        </Link>
      ))}
    </div>
  );
}
