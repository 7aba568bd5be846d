import { render, screen, within } from '@testing-library/react';
import { Payment } from './Payment';
import { expect, test } from 'vitest';
import { type ApprovalContext, toApprovalContext } from '../../services/approvals';
import { ADDRESS, approval } from '../../test-fixtures';

const context = (
  recipient: Partial<{ allowlist_empty: boolean; on_allowlist: boolean; label: string | null; first_payment: boolean }>,
): ApprovalContext =>
  toApprovalContext({
    wallet: { id: 'w', kind: 'agent', label: 'research-bot', pubkey: 'P', state: 'active', signer: 'local', created_at: '2026-03-01T09:00:00Z' },
    recipient: { address: ADDRESS, allowlist_empty: false, on_allowlist: false, label: null, first_payment: false, ...recipient },
    if_approved_now: {
      outcome: 'sent',
      reason: null,
      remaining_today_usdc: 90,
      remaining_today_after_usdc: 65,
      remaining_today_eur: null,
      remaining_today_after_eur: null,
    },
    requester: { id: 'key_1', label: null, prefix: null },
    webhook: { deliveries: [], event: null },
  });

test.each([
  [{ allowlist_empty: true }, 'The wallet has no allowlist (any recipient)'],
  [{ on_allowlist: true, label: 'Vendor' }, 'On the allowlist as “Vendor”'],
  [{ on_allowlist: true }, 'On the allowlist'],
  [{}, 'Not on the allowlist'],
])('what is known of the recipient: %j', (recipient, says) => {
  render(<Payment a={approval()} ctx={context(recipient)} />);
  expect(screen.getByRole('region', { name: 'Payment' }).textContent).toContain(says);
});

test('the amount and recipient first; a first payment is flagged; a purchase says so', () => {
  render(<Payment a={approval({ kind: 'x402', memo: 'rent', transaction_status: 'pending' })} ctx={context({ first_payment: true })} />);
  expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('25.00 USDCto 9WzD…AWWM');
  const text = screen.getByRole('region', { name: 'Payment' }).textContent;
  expect(text).toContain('First payment to this address');
  expect(text).toContain('A purchase asked by research-bot');
  expect(text).toContain('transaction pending');
  expect(text).toContain('Memo “rent”');
});

test('decided, the recipient facts are not shown', () => {
  render(<Payment a={approval({ status: 'sent' })} ctx={context({ first_payment: true })} />);
  expect(screen.queryByText('First payment to this address')).toBeNull();
});

test('an approval in another asset says its amount in that asset', () => {
  render(<Payment a={approval({ amount: 1.5, asset: 'PYUSD' })} ctx={context({})} />);
  expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('1.50 PYUSDto 9WzD…AWWM');
});

test('an MPP charge with splits names how many more it pays, and lists every recipient with its share', () => {
  const split = 'Stake11111111111111111111111111111111111111';
  render(<Payment a={approval({ kind: 'mpp', amount: 0.5, splits: [{ to: split, amount: 0.1 }] })} ctx={context({})} />);
  expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('0.50 USDCto 9WzD…AWWM and 1 more');
  expect(screen.getByRole('region', { name: 'Payment' }).textContent).toContain('A purchase asked by research-bot');
  const shares = within(screen.getByRole('list', { name: 'Split among 2 recipients' })).getAllByRole('listitem');
  expect(shares.map((li) => li.textContent)).toEqual([`0.40 USDC to the recipient ${ADDRESS}`, `0.10 USDC to ${split}`]);
});

test('a payment with one recipient lists no split', () => {
  render(<Payment a={approval({ kind: 'mpp', amount: 0.5 })} ctx={context({})} />);
  expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('0.50 USDCto 9WzD…AWWM');
  expect(screen.queryByRole('list', { name: /^Split/ })).toBeNull();
});
