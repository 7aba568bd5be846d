import { render, screen, within } from '@testing-library/react';
import { expect, test } from 'vitest';
import { ADDRESS, approval } from '../../test-fixtures';
import { Splits, recipientShare } from './Splits';

const A = 'Stake11111111111111111111111111111111111111';
const B = 'Config1111111111111111111111111111111111111';

test('the recipient gets what the splits leave of the whole amount', () => {
  expect(recipientShare(approval({ amount: 0.5, splits: [] }))).toBe(0.5);
  expect(
    recipientShare(
      approval({
        amount: 0.5,
        splits: [
          { to: A, amount: 0.05 },
          { to: B, amount: 0.02 },
        ],
      }),
    ),
  ).toBeCloseTo(0.43, 9);
});

test('every recipient with its share, in the charge’s asset, the recipient first', () => {
  render(
    <Splits
      a={approval({
        kind: 'mpp',
        amount: 3,
        asset: 'PYUSD',
        splits: [
          { to: A, amount: 1 },
          { to: B, amount: 0.25 },
        ],
      })}
    />,
  );
  const items = within(screen.getByRole('list', { name: 'Split among 3 recipients' })).getAllByRole('listitem');
  expect(items.map((li) => li.textContent)).toEqual([`1.75 PYUSD to the recipient ${ADDRESS}`, `1.00 PYUSD to ${A}`, `0.25 PYUSD to ${B}`]);
});

test('a payment without splits shows nothing', () => {
  const { container } = render(<Splits a={approval({ kind: 'mpp' })} />);
  expect(container.innerHTML).toBe('');
});
