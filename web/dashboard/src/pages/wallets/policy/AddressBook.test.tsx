import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { expect, test } from 'vitest';
import { AddressBook } from './AddressBook';
import { DEFAULT_DRAFT, type Entry, problemsOf } from './policy-draft';

const A = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

function Book() {
  const [entries, setEntries] = useState<Entry[]>([]);
  return <AddressBook prefix="t" entries={entries} problems={problemsOf({ ...DEFAULT_DRAFT, entries })} onChange={setEntries} />;
}

test('empty is any address; rows are added, checked as typed, and removed', async () => {
  const user = userEvent.setup();
  render(<Book />);
  expect(screen.getByText('Empty: the wallet may pay any address.')).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Add address' }));
  await user.click(screen.getByRole('button', { name: 'Add address' }));
  expect(screen.getByText('The wallet may pay only these addresses.')).toBeTruthy();
  const rows = within(screen.getByRole('list', { name: 'Allowlist entries' })).getAllByRole('listitem');
  expect(rows).toHaveLength(2);
  await user.type(screen.getByLabelText('Address 1'), A);
  await user.type(screen.getByLabelText('Address 2'), A);
  expect(screen.getByLabelText('Address 1').getAttribute('aria-invalid')).toBe('false');
  expect(screen.getByLabelText('Address 2').getAttribute('aria-invalid')).toBe('true');
  await user.click(screen.getByRole('button', { name: 'Remove address 2' }));
  expect(within(screen.getByRole('list', { name: 'Allowlist entries' })).getAllByRole('listitem')).toHaveLength(1);
  expect(screen.getByText('Valid address.')).toBeTruthy();
});
