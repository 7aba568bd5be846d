import { oneOf } from '../../search';

/** InboxSearch is the inbox's tab: pending (none) or decided. */
export type InboxSearch = { tab?: 'decided' };

export const inboxSearch = (s: Record<string, unknown>): InboxSearch => ({ tab: oneOf(s.tab, ['decided'] as const) });
