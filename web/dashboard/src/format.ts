export function usdc(n: number): string {
  return `${n.toLocaleString('en-US', { maximumFractionDigits: 6 })} USDC`;
}

/** sol shows lamports in SOL, exactly (a lamport is 10^-9 SOL). */
export function sol(lamports: number): string {
  return `${(lamports / 1e9).toLocaleString('en-US', { maximumFractionDigits: 9 })} SOL`;
}

export function short(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

export function when(iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}

/** countdown says how long until iso, to the minute. */
export function countdown(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
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
