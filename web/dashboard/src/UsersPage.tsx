import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { type Role, type Session, addUser, changeUser, listUsers, removeUser } from './api';
import { errorText } from './format';
import { ConfirmDialog } from './components/ConfirmDialog';
import { SkeletonRows } from './components/Skeleton';
import { Time } from './components/Time';
import { invalidate, keys } from './queries';
import { addressProblem } from './address';

const ROLES: Role[] = ['owner', 'approver', 'viewer'];

/** UsersPage lets owners add people by address, change their role and remove them. */
export function UsersPage({ session }: { session: Session }) {
  const list = useQuery({ queryKey: keys.users, queryFn: async () => (await listUsers()).users });
  const users = list.data ?? null;
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [address, setAddress] = useState('');
  const [role, setRole] = useState<Role>('approver');
  const [removing, setRemoving] = useState<string | null>(null);
  const owner = session.role === 'owner';

  const load = () => invalidate(keys.users);

  async function act(what: () => Promise<unknown>) {
    setError('');
    try {
      await what();
      await load();
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    }
  }

  const valid = addressProblem(address.trim()) === '';
  const leaving = users?.find((u) => u.address === removing);
  return (
    <main className="page">
      <h1>Users</h1>
      <p className="notice">
        People sign in with these Solana addresses. Owners may do everything; approvers approve, reject and freeze; viewers read.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {owner && (
        <form
          className="card filters"
          aria-label="Add a user"
          onSubmit={async (e) => {
            e.preventDefault();
            if (valid && (await act(() => addUser(address.trim(), role)))) setAddress('');
          }}
        >
          <label>
            Address{' '}
            <input
              value={address}
              onChange={(e) => setAddress(e.target.value)}
              aria-invalid={address !== '' && !valid}
              spellCheck={false}
              className="w-full font-mono text-sm sm:w-[28rem]"
            />
          </label>
          <label>
            Role{' '}
            <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit" className="btn btn-primary" disabled={!valid}>
            Add user
          </button>
          {address !== '' && !valid && <span className="warn">Not a Solana address (base58, 32–44 characters).</span>}
        </form>
      )}
      <ConfirmDialog
        open={removing !== null}
        title="Remove this person?"
        confirm="Confirm removal"
        tone="danger"
        onClose={() => setRemoving(null)}
        onConfirm={() => act(() => removeUser(removing!)).then(() => setRemoving(null))}
      >
        <p className="m-0">
          <code className="break-all">{removing}</code> can no longer sign in to this account.
        </p>
        {(leaving?.live_keys ?? 0) > 0 && (
          <p className="m-0">
            Also revokes the {leaving!.live_keys === 1 ? 'API key' : `${leaving!.live_keys} API keys`} they made (directly or through their keys).
          </p>
        )}
      </ConfirmDialog>
      {users === null ? (
        !error && <SkeletonRows rows={3} height="h-10" />
      ) : (
        <table className="table" aria-label="Users">
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Role</th>
              <th scope="col">Added</th>
              {owner && <th scope="col">Remove</th>}
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.address} data-address={u.address}>
                <td>
                  <code className="break-all">{u.address}</code>
                  {u.address === session.address && ' (you)'}
                </td>
                <td>
                  {owner ? (
                    <select
                      aria-label={`Role of ${u.address}`}
                      value={u.role}
                      onChange={(e) => act(() => changeUser(u.address, e.target.value as Role))}
                    >
                      {ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                  ) : (
                    u.role
                  )}
                </td>
                <td>
                  <Time iso={u.created_at} />
                </td>
                {owner && (
                  <td>
                    <button type="button" className="btn btn-sm" onClick={() => setRemoving(u.address)}>
                      Remove
                    </button>
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
