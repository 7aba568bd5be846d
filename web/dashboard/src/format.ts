import { formatDistance } from 'date-fns';

// Numbers are formatted in the reader's locale (the browser's), or the one
// given; a formatter is made once per locale and kind.
const formatters = new Map<string, Intl.NumberFormat>();
function number(n: number, min: number, max: number, locale?: string): string {
  const key = `${locale ?? ''}/${min}/${max}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, { minimumFractionDigits: min, maximumFractionDigits: max });
    formatters.set(key, f);
  }
  return f.format(n);
}

/** amount is a USDC amount without its unit: cents always, down to the micro-USDC (1,234.50; 0.000001). */
export const amount = (n: number, locale?: string): string => number(n, 2, 6, locale);

/** usdc is a USDC amount with its unit, in the reader's locale: 1,234.50 USDC. */
export function usdc(n: number, locale?: string): string {
  return `${amount(n, locale)} USDC`;
}

/**
 * money is an amount of an asset with its symbol, in the reader's locale:
 * 1.50 PYUSD, 20.00 EURC; SOL exactly (9 decimals at most).
 */
export function money(n: number, asset: string, locale?: string): string {
  return asset === 'SOL' ? sols(n, locale) : `${amount(n, locale)} ${asset}`;
}

/** count is a whole number in the reader's locale: 1,234. */
export const count = (n: number, locale?: string): string => number(n, 0, 0, locale);

/** solAmount is a SOL amount without its unit, exactly (9 decimals at most). */
export const solAmount = (n: number, locale?: string): string => number(n, 0, 9, locale);

/** sols is a SOL amount, exactly (9 decimals at most), so a tiny balance never rounds to 0. */
export const sols = (n: number, locale?: string): string => `${solAmount(n, locale)} SOL`;

/** sol shows lamports in SOL, exactly (a lamport is 10^-9 SOL). */
export function sol(lamports: number, locale?: string): string {
  return sols(lamports / 1e9, locale);
}

export function short(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

/** ago is how long ago (or until) t is, in words: "5 minutes ago", "in 2 hours". */
export function ago(t: Date | string, now: number = Date.now()): string {
  return formatDistance(new Date(t), now, { addSuffix: true });
}

/** when is an exact time in UTC, to the minute (the title of a relative time). */
export function when(t: Date | string | null): string {
  if (!t) return '—';
  return new Date(t).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}

/** stamp is an exact time in UTC to the second (a delivery's attempts often come seconds apart). */
export function stamp(t: Date | string | null): string {
  if (!t) return '—';
  return new Date(t).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }) + ' UTC';
}

/** countdown says how long until t, to the minute. */
export function countdown(t: Date | string, now: number): string {
  const ms = new Date(t).getTime() - now;
  if (ms <= 0) return 'expired';
  const m = Math.floor(ms / 60000);
  const d = Math.floor(m / 1440);
  const h = Math.floor((m % 1440) / 60);
  return d > 0 ? `${d} d ${h} h` : h > 0 ? `${h} h ${m % 60} min` : `${m % 60} min`;
}

/** explorer links a signature on the public explorer (none for local chains). */
export function explorer(signature: string, network: string): string {
  return `https://explorer.solana.com/tx/${signature}${network === 'devnet' ? '?cluster=devnet' : ''}`;
}

export function actor(a: string | null): string {
  if (!a) return '—';
  if (a.startsWith('user:')) return `user ${short(a.slice(5))}`;
  if (a.startsWith('slack:')) return `Slack ${a.slice(6)}`;
  if (a.startsWith('key_')) return `key ${a.slice(4, 12)}…`;
  return a;
}

/** errorText is what a failure says, for the page. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
