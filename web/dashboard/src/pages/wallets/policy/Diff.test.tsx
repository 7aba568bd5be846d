import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { Diff } from './Diff';

test('each kind of change, old → new', () => {
  render(
    <Diff
      testid="diff"
      changes={[
        { kind: 'field', field: 'daily_limit_usdc', name: 'Daily limit', from: 100, to: 50 },
        { kind: 'rule', field: 'max_tx_per_day', name: 'Payments a day', from: 'no limit', to: '3 payments' },
        { kind: 'added', address: 'Addr1', label: 'Acme' },
        { kind: 'removed', address: 'Addr2', label: '' },
        { kind: 'relabelled', address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', from: '', to: 'Vendor' },
      ]}
    />,
  );
  expect(screen.getAllByRole('listitem').map((li) => [li.dataset.change, li.textContent])).toEqual([
    ['daily_limit_usdc', 'Daily limit: 100.00 USDC → 50.00 USDC'],
    ['max_tx_per_day', 'Payments a day: no limit → 3 payments'],
    ['added', 'Allowlist: added Addr1 (Acme)'],
    ['removed', 'Allowlist: removed Addr2'],
    ['relabelled', 'Allowlist: 9WzD…AWWM relabelled no label → Vendor'],
  ]);
  expect(screen.getByTestId('diff').tagName).toBe('UL');
});
