import { createFileRoute } from '@tanstack/react-router';
import { UsersPage } from '../pages/users/UsersPage';
import { warm } from '../services/queryClient';
import { usersQuery } from '../services/users';
import { useSession } from '../session';

/** The people of the account; owners add them, change their role and remove them. */
export const Route = createFileRoute('/users')({
  beforeLoad: () => ({ users: usersQuery() }),
  loader: ({ context: { queryClient, users } }) => warm(queryClient.ensureQueryData(users)),
  component: function Users() {
    return <UsersPage session={useSession()} />;
  },
});
