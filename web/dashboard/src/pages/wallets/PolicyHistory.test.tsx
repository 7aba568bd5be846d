import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { toAuditEntry } from '../../services/audit';
import { policy } from '../../test-fixtures';
import { PolicyHistory } from './PolicyHistory';

const entry = (seq: number, action: string, details: unknown = {}) =>
  toAuditEntry({
    id: `e${seq}`,
    seq,
    at: '2026-04-01T12:00:00Z',
    actor: 'user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
    action,
    target: 'wallet:w',
    details,
    hash: 'h',
    prev_hash: 'p',
  });

test('who changed what: a policy change old → new, a save that changed nothing, a freeze and an unfreeze', () => {
  render(
    <PolicyHistory
      history={[
        entry(4, 'policy.updated', { before: policy(), after: policy({ daily_limit_usdc: 50 }) }),
        entry(3, 'policy.updated', { before: policy(), after: policy() }),
        entry(2, 'wallet.frozen'),
        entry(1, 'wallet.unfrozen'),
      ]}
      error=""
    />,
  );
  const items = screen.getAllByRole('listitem').filter((li) => li.dataset.action);
  expect(items.map((li) => li.querySelector('p')!.textContent!.replace(/ \S+ ago$|\d+ \w+ ago$/, ''))).toEqual([
    expect.stringContaining('user 9WzD…AWWM changed the policy:'),
    expect.stringContaining('saved the policy'),
    expect.stringContaining('froze the wallet'),
    expect.stringContaining('unfroze the wallet'),
  ]);
  expect(items[0].textContent).toContain('100.00 USDC → 50.00 USDC');
});

test('none, unknown, or unreadable', () => {
  const { rerender } = render(<PolicyHistory history={[]} error="" />);
  expect(screen.getByText('No changes since the wallet was created.')).toBeTruthy();
  rerender(<PolicyHistory history={null} error="forbidden" />);
  expect(screen.getByText('Could not load the history: forbidden')).toBeTruthy();
});
