import { useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { Empty } from '../../components/Empty';
import { Form, useDraft } from '../../components/Form';
import { LoadMore, itemsOf } from '../../components/LoadMore';
import { Middle } from '../../components/Middle';
import { SkeletonRows } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { actor, errorText, when } from '../../format';
import { auditFilterOf } from '../../routes/audit.schema';
import { auditChainQuery, auditQuery } from '../../services/audit';

const route = getRouteApi('/audit');

// Suggestions for the action filter; the API refuses an unknown one with
// the full list, which the page shows.
const ACTIONS = [
  'wallet.created',
  'policy.updated',
  'wallet.frozen',
  'wallet.unfrozen',
  'send.sent',
  'send.blocked',
  'send.pending_approval',
  'send.failed',
  'send.resigned',
  'approval.approved',
  'approval.voted',
  'approval.rejected',
  'approval.expired',
  'key.created',
  'key.rotated',
  'key.revoked',
  'permission.denied',
  'session.signed_in',
  'session.refused',
  'session.signed_out',
  'user.added',
  'user.changed',
  'user.removed',
  'fee_payer.updated',
  'x402.signed',
  'x402.expired',
  'mpp.signed',
  'mpp.expired',
  'account.settings_updated',
];

/**
 * PHONE_ROW places an entry's cells on a phone: the action and its number,
 * who and when, the target on one line (cut in the middle), then its details.
 */
const PHONE_ROW = "max-sm:[grid-template-areas:'action_seq'_'actor_when'_'target_target'_'details_details']";

/** AuditPage lists the account's audit log, newest first, with the chain's state. */
export function AuditPage() {
  // The filter is in the URL (?action=…&target=…): a link is the filtered log.
  const filter = auditFilterOf(route.useSearch());
  const navigate = route.useNavigate();
  const setFilter = (f: { action: string; target: string }) => navigate({ search: { action: f.action || undefined, target: f.target || undefined } });
  // Back and forward change the filter: the form follows.
  const [draft, setDraft] = useDraft(filter);
  const list = useInfiniteQuery(auditQuery(filter));
  const entries = itemsOf(list);
  const error = list.error ? errorText(list.error) : '';
  const verification = useQuery(auditChainQuery());
  const chain = verification.data ?? null;
  const chainError = verification.error ? errorText(verification.error) : '';
  const verify = () => verification.refetch();
  const [open, setOpen] = useState<string | null>(null);

  return (
    <main className="page">
      <h1>Audit log</h1>
      <section className="mb-4 flex flex-wrap items-center gap-x-4 gap-y-2 [&>p]:m-0" aria-label="Hash chain">
        {chainError ? (
          <p className="error">Could not verify the chain: {chainError}</p>
        ) : chain === null ? (
          <p className="notice">Verifying the chain…</p>
        ) : chain.intact ? (
          <p className="ok" role="status">
            Chain verified through entry {chain.verifiedThroughSeq} ({when(chain.verifiedAt)})
            {chain.more ? '; newer entries are left for the next check: verify again.' : '.'}
          </p>
        ) : (
          <p className="error" role="alert">
            Chain broken at entry {chain.firstBreak?.seq}: {chain.firstBreak?.problem}. Verified through entry {chain.verifiedThroughSeq}.
          </p>
        )}
        <button type="button" className="btn" onClick={verify}>
          Verify again
        </button>
      </section>
      <Form
        className="card filters filters-2 max-sm:[&>label]:basis-full"
        onSubmit={() => setFilter({ action: draft.action.trim(), target: draft.target.trim() })}
      >
        <label>
          Action <input list="audit-actions" value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value })} />
        </label>
        <datalist id="audit-actions">
          {ACTIONS.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        <label>
          Target{' '}
          <input
            value={draft.target}
            placeholder="wallet:<id>, approval:ap_…, key:key_…"
            onChange={(e) => setDraft({ ...draft, target: e.target.value })}
          />
        </label>
        <button type="submit" className="btn">
          Filter
        </button>
      </Form>
      {error && <p className="error">Could not load the audit log: {error}</p>}
      {entries === null ? (
        !error && <SkeletonRows rows={5} height="h-10" />
      ) : entries.length === 0 ? (
        <Empty title="No entries.">
          {filter.action || filter.target
            ? 'Nothing matches this filter: clear it to see every entry.'
            : 'Every action in the account is recorded here.'}
        </Empty>
      ) : (
        <Table label="Audit log" columns={[{ name: '#', num: true }, 'When', 'Actor', 'Action', 'Target', 'Details']}>
          {entries.map((e) => (
            <tr key={e.id} data-seq={e.seq} className={`${PHONE_ROW} ${chain?.firstBreak?.seq === e.seq ? 'bg-bad-soft' : ''}`}>
              <td className="num max-sm:text-muted max-sm:[grid-area:seq] max-sm:before:content-['#']">{e.seq}</td>
              <td className="max-sm:text-right max-sm:text-muted max-sm:[grid-area:when]">
                <Time at={e.at} />
              </td>
              <td className="max-sm:[grid-area:actor]" title={e.actor}>
                {actor(e.actor)}
              </td>
              <td className="max-sm:font-semibold max-sm:[grid-area:action]">{e.action}</td>
              <td className="max-sm:[grid-area:target]">
                <code>
                  <Middle text={e.target} />
                </code>
              </td>
              <td className="max-sm:[grid-area:details]">
                <button type="button" className="btn btn-sm" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>
                  {open === e.id ? 'Hide' : 'Show'}
                </button>
                {open === e.id && (
                  <pre className="mt-1 mb-0 max-w-[40ch] wrap-anywhere whitespace-pre-wrap max-sm:max-w-none">
                    {JSON.stringify(e.details, null, 2)}
                  </pre>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <LoadMore list={list} className="btn mt-3" />
    </main>
  );
}
