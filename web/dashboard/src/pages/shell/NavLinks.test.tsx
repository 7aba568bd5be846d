import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { renderRoute } from '../../test-render';
import { NavLinks } from './NavLinks';

test('every page in order, the approvals waiting beside Approvals ("…" until known)', async () => {
  const { unmount } = renderRoute('/t', <NavLinks pending={null} />);
  await screen.findByRole('link', { name: /Approvals/ });
  expect(screen.getAllByRole('link').map((a) => a.textContent)).toEqual([
    'Overview',
    'Approvals… pending',
    'Wallets',
    'Transactions',
    'Webhooks',
    'Audit log',
    'Analytics',
    'Keys',
    'Users',
  ]);
  unmount();
  renderRoute('/t', <NavLinks pending={3} owner />);
  const count = (await screen.findByRole('link', { name: /Approvals/ })).querySelector('.count')!;
  expect(count.textContent).toBe('3');
  expect(count.className).toContain('bg-accent');
});

test('owners also see Exports; no one else does', async () => {
  const { unmount } = renderRoute('/t', <NavLinks pending={0} owner />);
  await screen.findByRole('link', { name: 'Exports' });
  expect(screen.getAllByRole('link').at(-1)!.textContent).toBe('Exports');
  unmount();
  renderRoute('/t', <NavLinks pending={0} />);
  await screen.findByRole('link', { name: 'Users' });
  expect(screen.queryByRole('link', { name: 'Exports' })).toBeNull();
});
