import type { AuditFilter } from '../services/audit';
import { text } from '../search';

/** AuditSearch is the audit log's filter: an action, a target. */
export type AuditSearch = { action?: string; target?: string };

export const auditSearch = (s: Record<string, unknown>): AuditSearch => ({
  action: text(s.action)?.trim(),
  target: text(s.target)?.trim(),
});

/** auditFilterOf is the search as the log's filter: '' for what is not set. */
export const auditFilterOf = (s: AuditSearch): AuditFilter => ({ action: s.action ?? '', target: s.target ?? '' });
