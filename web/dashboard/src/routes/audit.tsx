import { createFileRoute } from '@tanstack/react-router';
import { AuditPage } from '../pages/audit/AuditPage';
import { auditChainQuery, auditQuery } from '../services/audit';
import { warm, warmList } from '../services/queryClient';
import { auditFilterOf, auditSearch } from './audit.schema';

/** The audit log, newest first, filtered by the URL (?action=…&target=…), with the hash chain's state. */
export const Route = createFileRoute('/audit')({
  validateSearch: auditSearch,
  loaderDeps: ({ search }) => auditFilterOf(search),
  beforeLoad: ({ search }) => ({ audit: { list: auditQuery(auditFilterOf(search)), chain: auditChainQuery() } }),
  loader: ({ context: { queryClient, audit } }) => {
    warm(queryClient.ensureQueryData(audit.chain));
    warmList(audit.list);
  },
  component: AuditPage,
});
