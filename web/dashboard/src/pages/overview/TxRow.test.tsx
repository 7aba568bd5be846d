import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { transaction } from '../../test-fixtures';
import { TxRow } from './TxRow';

test('amount, status, who paid whom, the memo when there is one', () => {
  const { rerender } = render(
    <ul>
      <TxRow t={transaction({ amount: 2, memo: 'invoice 7' })} wallet="research-bot" />
    </ul>,
  );
  const row = screen.getByRole('listitem');
  expect(row.textContent).toContain('2.00 USDC');
  expect(row.textContent).toContain('confirmed');
  expect(row.textContent).toContain('research-bot to 9WzD…AWWM');
  expect(row.textContent).toContain('“invoice 7”');
  rerender(
    <ul>
      <TxRow t={transaction()} wallet="research-bot" />
    </ul>,
  );
  expect(document.querySelector('.memo')).toBeNull();
});

test('a payment in another asset is said in it', () => {
  render(
    <ul>
      <TxRow t={transaction({ amount: 20, kind: 'eurc', asset: 'EURC' })} wallet="research-bot" />
    </ul>,
  );
  expect(screen.getByRole('listitem').textContent).toContain('20.00 EURC');
});
