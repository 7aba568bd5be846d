import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { addressProblem } from '../../address';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Form } from '../../components/Form';
import { SkeletonRows } from '../../components/Skeleton';
import { Table } from '../../components/Table';
import { Time } from '../../components/Time';
import { errorText } from '../../format';
import { invalidate } from '../../services/queryClient';
import type { Role, Session } from '../../services/session';
import { type User, addUser, changeUser, removeUser, setSlackMember, userKeys, usersQuery } from '../../services/users';

const ROLES: Role[] = ['owner', 'approver', 'viewer'];

/** SLACK_MEMBER is the form of a Slack member id, as the API checks it. */
const SLACK_MEMBER = /^[UW][A-Z0-9]{1,31}$/;

/** slackProblem says why s is no Slack member id ('' when it is one, or empty). */
export function slackProblem(s: string): string {
  const t = s.trim();
  if (t === '' || SLACK_MEMBER.test(t)) return '';
  return 'A Slack member id: U or W, then capital letters and digits (in Slack: the profile, ⋮, Copy member ID).';
}

/**
 * SlackMember links a person to their Slack member id, so that their clicks
 * on an approval message count as them (wallets needing several people
 * count only linked members). save sends the id, or null to unlink. The
 * page keys it by the id it shows, so a change (saved here or elsewhere)
 * starts it anew from the id as it is.
 */
function SlackMember({ user, save }: { user: User; save: (id: string | null) => Promise<boolean> }) {
  const now = user.slackUserId ?? '';
  const [text, setText] = useState(now);
  const [busy, setBusy] = useState(false);
  const id = `slack-${user.address}`;
  const problem = slackProblem(text);
  const typed = text.trim();
  const act = async (v: string | null) => {
    setBusy(true);
    await save(v);
    setBusy(false);
  };
  return (
    <Form
      className="flex flex-wrap items-start gap-2"
      aria-label={`Slack member of ${user.address}`}
      noValidate
      onSubmit={() => {
        if (!problem && typed !== '' && typed !== now) void act(typed);
      }}
    >
      <span className="grid min-w-0 gap-1">
        <input
          id={id}
          value={text}
          placeholder="Not linked"
          spellCheck={false}
          autoComplete="off"
          maxLength={40}
          aria-label={`Slack member id of ${user.address}`}
          aria-invalid={problem !== ''}
          aria-describedby={`${id}-note`}
          className="w-36 font-mono text-sm"
          onChange={(e) => setText(e.target.value)}
        />
        <span id={`${id}-note`} className="field-error max-w-64">
          {problem}
        </span>
      </span>
      <button type="submit" className="btn btn-sm min-h-11" disabled={busy || problem !== '' || typed === '' || typed === now}>
        {now ? 'Change' : 'Link'}
      </button>
      {now && (
        <button type="button" className="btn btn-sm min-h-11" disabled={busy} onClick={() => void act(null)}>
          Unlink
        </button>
      )}
    </Form>
  );
}

/** UsersPage lets owners add people by address, change their role and remove them. */
export function UsersPage({ session }: { session: Session }) {
  const list = useQuery(usersQuery());
  const users = list.data ?? null;
  const [failure, setError] = useState('');
  const error = failure || (list.error ? errorText(list.error) : '');
  const [address, setAddress] = useState('');
  const [role, setRole] = useState<Role>('approver');
  const [removing, setRemoving] = useState<string | null>(null);
  const owner = session.role === 'owner';

  const load = () => invalidate(userKeys.all);

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
        People sign in with these Solana addresses. Owners may do everything; approvers approve, reject and freeze; viewers read. Linking a
        person&apos;s Slack member id makes their clicks on approval messages count as them: a wallet that needs several people counts only linked
        members.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {owner && (
        <Form
          className="card filters"
          aria-label="Add a user"
          onSubmit={async () => {
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
        </Form>
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
        {(leaving?.liveKeys ?? 0) > 0 && (
          <p className="m-0">
            Also revokes the {leaving!.liveKeys === 1 ? 'API key' : `${leaving!.liveKeys} API keys`} they made (directly or through their keys).
          </p>
        )}
      </ConfirmDialog>
      {users === null ? (
        !error && <SkeletonRows rows={3} height="h-10" />
      ) : (
        <Table label="Users" columns={['Address', 'Role', 'Slack member', 'Added', owner && 'Remove']}>
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
              <td data-label="Slack member" data-slack={u.slackUserId ?? ''}>
                {owner ? (
                  <SlackMember key={u.slackUserId ?? ''} user={u} save={(v) => act(() => setSlackMember(u.address, v))} />
                ) : (
                  (u.slackUserId ?? 'not linked')
                )}
              </td>
              <td>
                <Time at={u.createdAt} />
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
        </Table>
      )}
    </main>
  );
}
