// The pages' state in the URL: filters, cursors and tabs are search
// parameters, so a link is the state. The query is plain strings (no
// JSON), so links stay readable: ?status=failed&since=2026-01-31. Each
// route validates its own (a .schema.ts beside it) with these: a value the
// page does not know is dropped (and leaves the URL).

/** parseSearch reads the URL's query as plain strings. */
export const parseSearch = (s: string) => Object.fromEntries(new URLSearchParams(s));

/** stringifySearch writes the search parameters set (undefined and '' are left out). */
export function stringifySearch(o: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== '') q.set(k, String(v));
  const t = q.toString();
  return t ? `?${t}` : '';
}

/** text is a search parameter's value, or undefined when absent or empty. */
export const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** day is a YYYY-MM-DD search parameter, or undefined. */
export const day = (v: unknown) => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : undefined);

/** oneOf is a search parameter among the values allowed, or undefined. */
export const oneOf = <T extends string>(v: unknown, allowed: readonly T[]) => (allowed.includes(v as T) ? (v as T) : undefined);

/** UUID is the form of the API's ids (wallets, endpoints). */
export const UUID = /^[0-9a-f-]{36}$/;

/** APPROVAL_ID is the form of an approval's id. */
export const APPROVAL_ID = /^ap_[0-9a-f-]+$/;
