// The audit log: every action in the account, newest first, in a hash
// chain the API verifies.
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { API, type Page, type Schemas, call, date } from './api';
import { cursorPages } from './queryClient';

export type AuditEntryFromAPI = Schemas['AuditEntry'];
export type AuditVerificationFromAPI = Schemas['AuditVerificationOutputBody'];

/** AuditEntry is one entry of the log as the pages read it. */
export interface AuditEntry {
  id: string;
  seq: number;
  at: Date;
  /** Who: user:<address>, key_…, slack:<member>, system. */
  actor: string;
  action: string;
  /** What: wallet:<id>, approval:ap_…, key:key_… */
  target: string;
  /** The action's details, as the API recorded them (JSON). */
  details: unknown;
}

export const toAuditEntry = (e: AuditEntryFromAPI): AuditEntry => ({
  id: e.id,
  seq: e.seq,
  at: date(e.at),
  actor: e.actor,
  action: e.action,
  target: e.target,
  details: e.details,
});

/** AuditVerification is the chain's state: intact through an entry, or where it breaks. */
export interface AuditVerification {
  intact: boolean;
  verifiedThroughSeq: number;
  verifiedAt: Date;
  /** Newer entries are left for the next check. */
  more: boolean;
  firstBreak: { seq: number; problem: string } | null;
}

export const toAuditVerification = (v: AuditVerificationFromAPI): AuditVerification => ({
  intact: v.intact,
  verifiedThroughSeq: v.verified_through_seq,
  verifiedAt: date(v.verified_at),
  more: v.more,
  firstBreak: v.first_break ? { seq: v.first_break.seq, problem: v.first_break.problem } : null,
});

export type AuditFilter = { action: string; target: string };

export const auditKeys = {
  list: (filter: AuditFilter) => ['audit', filter] as const,
  chain: () => ['audit-chain'] as const,
};

/** listAudit is a page of the entries the filter keeps, newest first. */
export async function listAudit(filter: Partial<AuditFilter>, cursor?: string, signal?: AbortSignal): Promise<Page<AuditEntry>> {
  const q = new URLSearchParams({ limit: '50' });
  if (filter.action) q.set('action', filter.action);
  if (filter.target) q.set('target', filter.target);
  if (cursor) q.set('cursor', cursor);
  const r = await call<{ entries: AuditEntryFromAPI[]; next_cursor: string | null }>('GET', `${API}/audit-log?${q}`, undefined, signal);
  return { items: r.entries.map(toAuditEntry), nextCursor: r.next_cursor };
}

/** auditQuery pages the log the filter keeps ("Load more" appends the next page). */
export const auditQuery = (filter: AuditFilter) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(filter),
    queryFn: ({ pageParam, signal }) => listAudit(filter, pageParam, signal),
    ...cursorPages,
  });

/** auditChainQuery verifies the hash chain (read once; "Verify again" reads it again). */
export const auditChainQuery = () =>
  queryOptions({
    queryKey: auditKeys.chain(),
    queryFn: ({ signal }) => call<AuditVerificationFromAPI>('GET', `${API}/audit-log/verification`, undefined, signal).then(toAuditVerification),
  });
