import { screen, within } from '@testing-library/react';
import { expect, test } from 'vitest';
import type { Analytics } from '../../services/analytics';
import { approval, transaction, wallet } from '../../test-fixtures';
import { renderRoute } from '../../test-render';
import { Glance } from './Glance';

const today = (r: Partial<Analytics> = {}): Analytics => ({
  from: '2026-04-01',
  to: '2026-04-01',
  received: [],
  wallets: [],
  spend: [
    {
      day: '2026-04-01',
      wallet_id: 'w1',
      amount_usdc: 85,
      amount_eur: 0,
      transactions: 2,
      x402_payments: 0,
      x402_amount_usdc: 0,
      mpp_payments: 0,
      mpp_amount_usdc: 0,
      fee_lamports: 0,
    },
  ],
  approvals: [],
  median_decision_seconds: null,
  blocked: [{ reason: 'exceeds_max_tx', count: 2 }],
  ...r,
});
const box = (name: string) => screen.getByRole('heading', { name }).parentElement!;

test('unknown figures are skeletons', async () => {
  renderRoute('/t', <Glance pending={null} wallets={null} spend={null} failed={null} />);
  await screen.findByRole('region', { name: 'At a glance' });
  expect(document.querySelectorAll('.skeleton')).toHaveLength(3);
});

test('what waits, what was spent against the shown limits, and what failed or was blocked, each linked', async () => {
  renderRoute(
    '/t',
    <Glance
      pending={[approval(), approval({ id: 'ap_2' })]}
      wallets={[wallet()]}
      spend={today()}
      failed={{ transactions: [transaction({ status: 'failed' })], more: true }}
    />,
  );
  await screen.findByRole('region', { name: 'At a glance' });
  expect(box('Needs you now').textContent).toContain('2approvals wait for a decision.');
  expect(within(box('Spent today (UTC)')).getByRole('meter').getAttribute('aria-valuetext')).toBe('85.00 USDC of 100.00 USDC');
  const failed = box('Failed or blocked today');
  expect(within(failed).getByText('3+').tagName).toBe('P');
  expect(within(failed).getByRole('link', { name: '1+ failed' }).getAttribute('href')).toBe('/transactions?status=failed');
  expect(within(failed).getByRole('link', { name: '2 blocked by a policy' }).getAttribute('href')).toBe('/audit?action=send.blocked');
});

test('nothing waiting, nothing failed', async () => {
  renderRoute('/t', <Glance pending={[]} wallets={[]} spend={today({ spend: [], blocked: [] })} failed={{ transactions: [], more: false }} />);
  await screen.findByRole('region', { name: 'At a glance' });
  expect(box('Needs you now').textContent).toContain('no approval waits');
  expect(box('Failed or blocked today').textContent).toContain('nothing failed, nothing blocked');
});
