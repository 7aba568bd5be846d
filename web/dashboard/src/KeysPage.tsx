import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { type NewKey, type Session, createKey, listKeys, listWalletLabels, revokeKey, rotateKey } from './api';
import { actor, errorText, when } from './format';
import { invalidate, keys as cache } from './queries';
import { ShownOnce } from './ShownOnce';

/** Shown shows a new key once; it is never shown again. */
function Shown({ created, onDone }: { created: NewKey; onDone: () => void }) {
  return (
    <ShownOnce title="New key" value={created.key} testId="new-key" onDone={onDone}>
      <p>
        <strong>Copy this key now.</strong> Only its hash is stored: it will not be shown again.
      </p>
    </ShownOnce>
  );
}

/** KeysPage lists the account's API keys; owners create, rotate and revoke them. */
export function KeysPage({ session }: { session: Session }) {
  const owner = session.role === 'owner';
  const list = useQuery({ queryKey: cache.apiKeys, queryFn: async () => (await listKeys()).keys });
  const keys = list.data ?? null;
  const { data: wallets = [] } = useQuery({ queryKey: cache.walletLabels, queryFn: listWalletLabels });
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [role, setRole] = useState<'agent' | 'admin'>('agent');
  const [label, setLabel] = useState('');
  const [scope, setScope] = useState<string[]>([]);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [confirm, setConfirm] = useState<{ id: string; what: 'rotate' | 'revoke' } | null>(null);

  const load = () => invalidate(cache.apiKeys);

  async function act(what: () => Promise<NewKey | unknown>) {
    setError('');
    try {
      const r = await what();
      if (r && typeof r === 'object' && 'key' in r) setCreated(r as NewKey);
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
    <main className="wide">
      <h1>API keys</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && <Shown created={created} onDone={() => setCreated(null)} />}
      {owner && (
        <form
          className="filters"
          aria-label="Create a key"
          onSubmit={async (e) => {
            e.preventDefault();
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
            <select value={role} onChange={(e) => setRole(e.target.value as 'agent' | 'admin')}>
              <option value="agent">agent</option>
              <option value="admin">admin</option>
            </select>
          </label>
          <label>
            Label <input value={label} maxLength={100} onChange={(e) => setLabel(e.target.value)} />
          </label>
          {role === 'agent' && wallets.length > 0 && (
            <fieldset className="scope">
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
        </form>
      )}
      {keys === null ? (
        !error && <p>Loading…</p>
      ) : (
        <table className="audit" aria-label="Keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Role</th>
              <th scope="col">Wallets</th>
              <th scope="col">Made by</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              {owner && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-key={k.id}>
                <td>
                  {k.label ?? <span className="notice">no label</span>} <code>{k.prefix}…</code>
                </td>
                <td>{k.role}</td>
                <td>{k.wallet_ids ? k.wallet_ids.map((id) => name.get(id) ?? id.slice(0, 8)).join(', ') : 'all'}</td>
                <td data-testid="made-by">
                  {k.created_by === `user:${session.address}` ? 'you' : k.created_by ? actor(k.created_by) : 'command line'}
                </td>
                <td>{when(k.last_used_at)}</td>
                <td>{k.revoked_at ? (k.replaced_by ? 'rotated' : 'revoked') : 'active'}</td>
                {owner && (
                  <td>
                    {k.revoked_at ? null : confirm?.id === k.id ? (
                      <span className="confirm">
                        <button
                          type="button"
                          className="btn btn-danger"
                          onClick={() => act(() => (confirm.what === 'rotate' ? rotateKey(k.id) : revokeKey(k.id)))}
                        >
                          Confirm {confirm.what}
                        </button>
                        <button type="button" className="btn" onClick={() => setConfirm(null)}>
                          Cancel
                        </button>
                      </span>
                    ) : (
                      <span className="buttons">
                        <button type="button" className="btn" onClick={() => setConfirm({ id: k.id, what: 'rotate' })}>
                          Rotate
                        </button>
                        <button type="button" className="btn" onClick={() => setConfirm({ id: k.id, what: 'revoke' })}>
                          Revoke
                        </button>
                      </span>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
