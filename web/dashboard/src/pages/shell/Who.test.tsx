import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { session } from '../../test-fixtures';
import { Who } from './Who';

test('one account: who and their role, and sign-out', async () => {
  const out = vi.fn();
  render(<Who session={session('approver')} pick={() => {}} out={out} />);
  expect(screen.queryByRole('combobox')).toBeNull();
  expect(screen.getByTitle(session().address).textContent).toBe('9WzD…AWWM (approver)');
  await userEvent.click(screen.getByRole('button', { name: 'Sign out' }));
  expect(out).toHaveBeenCalledOnce();
});

test('several accounts: a switch naming each by network, role and id', async () => {
  const pick = vi.fn();
  const s = {
    ...session(),
    accounts: [
      { accountId: 'acc-1aaaaaaa', network: 'devnet' as const, role: 'owner' as const },
      { accountId: 'acc-2bbbbbbb', network: 'mainnet' as const, role: 'viewer' as const },
    ],
  };
  render(<Who session={s} pick={pick} out={() => {}} />);
  expect(screen.getAllByRole('option').map((o) => o.textContent)).toEqual(['devnet · owner · acc-1aaa', 'mainnet · viewer · acc-2bbb']);
  await userEvent.selectOptions(screen.getByLabelText('Account'), 'acc-2bbbbbbb');
  expect(pick).toHaveBeenCalledWith('acc-2bbbbbbb');
});
