import { screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { approval } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { Pending } from './Pending';

const count = () => document.querySelector('[data-field="pending-count"]')!.textContent;

test('unknown while the approvals are read', async () => {
  renderRoute('/t', <Pending pending={null} />);
  await screen.findByRole('region', { name: /Pending approvals/ });
  expect(count()).toBe('…');
});

test('the newest five, how many more, and a full page counted as 50+', async () => {
  const fifty = Array.from({ length: 50 }, (_, i) => approval({ id: `ap_${i}`, amount: i + 1, memo: i === 0 ? 'rent' : null }));
  renderRoute('/t', <Pending pending={fifty} />);
  await screen.findByRole('region', { name: /Pending approvals/ });
  expect(count()).toBe('50+');
  expect(document.querySelectorAll('[data-approval]')).toHaveLength(5);
  expect(screen.getByRole('link', { name: '1.00 USDC' }).getAttribute('href')).toBe('/approvals/ap_0');
  expect(screen.getByText('“rent”', { exact: false })).toBeTruthy();
  expect(screen.getByText(/45\+ more\./)).toBeTruthy();
});

test('none waiting says so', async () => {
  renderRoute('/t', <Pending pending={[]} />);
  expect(await screen.findByText('Nothing waits for a decision.')).toBeTruthy();
  expect(count()).toBe('0');
});
