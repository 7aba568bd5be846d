import { text } from '../../search';

/** WalletsSearch is the wallets' search: a label's part or an address's start. */
export type WalletsSearch = { q?: string };

export const walletsSearch = (s: Record<string, unknown>): WalletsSearch => ({ q: text(s.q)?.trim() });
