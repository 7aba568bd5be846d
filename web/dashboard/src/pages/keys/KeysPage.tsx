import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Empty } from '../../components/Empty';
import { Form } from '../../components/Form';
import { ShownOnce } from '../../components/ShownOnce';
import { SkeletonRows } from '../../components/Skeleton';
import { Status } from '../../components/Status';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { toast } from '../../components/Toast';
import { actor, errorText } from '../../format';
import { type KeyRole, type NewKey, createKey, keyKeys, keysQuery, revokeKey, rotateKey } from '../../services/keys';
import { invalidate } from '../../services/queryClient';
import type { Session } from '../../services/session';
import { walletLabelsQuery } from '../../services/wallets';

/** Shown shows a new key once; it is never shown again. */
function Shown({ created, onDone }: { created: NewKey; onDone: () => void }) {
  return (
    <ShownOnce title="New key" value={created.key} testId="new-key" onDone={onDone}>
      <p className="m-0">
        <strong>Copy this key now.</strong> Only its hash is stored: it will not be shown again.
      </p>
    </ShownOnce>
  );
}

/**
 * PHONE_ROW places a key's cells on a phone: which key and its role, the
 * wallets it may use, who made it, when it was last used, then its state
 * beside the buttons that change it.
 */
const PHONE_ROW = "max-sm:[grid-template-areas:'key_role'_'wallets_wallets'_'made_made'_'used_used'_'state_act']";

/** KeysPage lists the account's API keys; owners create, rotate and revoke them. */
export function KeysPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  const list = useQuery(keysQuery());
  const keys = list.data ?? null;
  const { data: wallets = [] } = useQuery(walletLabelsQuery());
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [role, setRole] = useState<KeyRole>('agent');
  const [label, setLabel] = useState('');
  const [scope, setScope] = useState<string[]>([]);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [confirm, setConfirm] = useState<{ id: string; what: 'rotate' | 'revoke' } | null>(null);

  const load = () => invalidate(keyKeys.all);

  async function act(what: () => Promise<NewKey | undefined>) {
    setError('');
    try {
      const r = await what();
      if (r) setCreated(r);
      else toast('The key was revoked.');
      setConfirm(null);
      await load();
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    }
  }

  const name = new Map(wallets.map((w) => [w.id, w.label]));
  return (
    <main className="page">
      <h1>API keys</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && <Shown created={created} onDone={() => setCreated(null)} />}
      {owner && (
        <Form
          className="card filters filters-2"
          aria-label="Create a key"
          onSubmit={async () => {
            const made = await act(() =>
              createKey({
                role,
                ...(label.trim() ? { label: label.trim() } : {}),
                ...(role === 'agent' && scope.length ? { wallet_ids: scope } : {}),
              }),
            );
            if (made) {
              setLabel('');
              setScope([]);
            }
          }}
        >
          <label>
            Role{' '}
            <select value={role} onChange={(e) => setRole(e.target.value as KeyRole)}>
              <option value="agent">agent</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <label>
            Label <input value={label} maxLength={100} onChange={(e) => setLabel(e.target.value)} />
          </label>
          {role === 'agent' && wallets.length > 0 && (
            <fieldset className="grid gap-1 [&_label]:flex [&_label]:items-center [&_label]:gap-2 [&_label]:font-normal max-sm:[&_label]:min-h-10">
              <legend>Only these wallets (none: all)</legend>
              {wallets.map((w) => (
                <label key={w.id}>
                  <input
                    type="checkbox"
                    checked={scope.includes(w.id)}
                    onChange={(e) => setScope(e.target.checked ? [...scope, w.id] : scope.filter((x) => x !== w.id))}
                  />{' '}
                  {w.label} <code>{w.id.slice(0, 8)}</code>
                </label>
              ))}
            </fieldset>
          )}
          <button type="submit" className="btn btn-primary">
            Create key
          </button>
        </Form>
      )}
      <ConfirmDialog
        open={confirm !== null}
        title={confirm?.what === 'revoke' ? 'Revoke this key?' : 'Rotate this key?'}
        confirm={`Confirm ${confirm?.what ?? 'rotate'}`}
        tone="danger"
        error={error}
        onClose={() => setConfirm(null)}
        onConfirm={() => confirm && act(() => (confirm.what === 'rotate' ? rotateKey(confirm.id) : revokeKey(confirm.id)))}
      >
        <p className="m-0">
          {confirm?.what === 'revoke'
            ? 'Agents using it are refused from now on. This cannot be undone.'
            : 'A new key replaces it; the old one is refused from now on. The new key is shown once.'}
        </p>
      </ConfirmDialog>
      {keys === null ? (
        !error && <SkeletonRows rows={3} height="h-10" />
      ) : keys.length === 0 ? (
        <Empty title="No API keys yet.">
          {owner
            ? 'Create one above for each agent runtime: an agent key sends from its wallets, an admin key manages the account.'
            : 'An owner creates them.'}
        </Empty>
      ) : (
        <Table label="Keys" columns={['Key', 'Role', 'Wallets', 'Made by', 'Last used', 'State', owner && 'Actions']}>
          {keys.map((k) => (
            <tr key={k.id} data-key={k.id} className={PHONE_ROW}>
              <td className="max-sm:[grid-area:key]">
                {k.label ? <span className="max-sm:font-semibold">{k.label}</span> : <span className="notice">no label</span>}{' '}
                <code>{k.prefix}…</code>
              </td>
              <td className="max-sm:text-muted max-sm:[grid-area:role]">{k.role}</td>
              <td className="max-sm:[grid-area:wallets]" data-label="Wallets">
                {k.walletIds ? k.walletIds.map((id) => name.get(id) ?? id.slice(0, 8)).join(', ') : 'all'}
              </td>
              <td className="max-sm:[grid-area:made]" data-testid="made-by" data-label="Made by">
                {k.createdBy === `user:${session.address}` ? 'you' : k.createdBy ? actor(k.createdBy) : 'command line'}
              </td>
              <td className="max-sm:[grid-area:used]" data-label="Last used">
                {k.lastUsedAt ? <Time at={k.lastUsedAt} /> : <span className="notice">never</span>}
              </td>
              <td className="max-sm:self-center max-sm:[grid-area:state]">
                <Status status={k.revokedAt ? (k.replacedBy ? 'rotated' : 'revoked') : 'active'} />
              </td>
              {owner && (
                <td className="max-sm:text-right max-sm:[grid-area:act]">
                  {!k.revokedAt && (
                    <span className="buttons max-sm:justify-end sm:flex-nowrap">
                      <button type="button" className="btn btn-sm" onClick={() => setConfirm({ id: k.id, what: 'rotate' })}>
                        Rotate
                      </button>
                      <button type="button" className="btn btn-sm btn-danger" onClick={() => setConfirm({ id: k.id, what: 'revoke' })}>
                        Revoke
                      </button>
                    </span>
                  )}
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
    </main>
  );
}
