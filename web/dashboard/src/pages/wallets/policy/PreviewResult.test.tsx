import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import type { Preview } from '../../../services/wallets';
import { Figures, Outcome } from './PreviewResult';

const preview = (p: Partial<Preview> = {}): Preview => ({
  outcome: 'blocked',
  reason: 'exceeds_daily_limit',
  rule: 'daily_limit_usdc',
  spent_today_usdc: 95,
  remaining_today_usdc: 5,
  daily_limit_usdc: 100,
  spent_week_usdc: 95,
  remaining_week_usdc: null,
  weekly_limit_usdc: null,
  spent_month_usdc: 95,
  remaining_month_usdc: null,
  monthly_limit_usdc: null,
  payments_last_hour: 1,
  max_tx_per_hour: 4,
  payments_last_day: 2,
  max_tx_per_day: null,
  within_active_hours: null,
  active_hours: null,
  outside_active_hours: 'block',
  max_tx_usdc: 20,
  approval_threshold_usdc: 10,
  approvals_required: 1,
  asset: 'USDC',
  currency: 'USD',
  daily_limit_eur: null,
  spent_today_eur: 0,
  remaining_today_eur: 0,
  ...p,
});

test('the outcome, its reason, and the rule that decided it by its field name', () => {
  render(<Outcome p={preview()} testid="out" />);
  expect(screen.getByTestId('out').textContent).toBe('blocked exceeds_daily_limit · decided by Daily limit');
});

test('pending approval reads as words', () => {
  render(<Outcome p={preview({ outcome: 'pending_approval', reason: null, rule: 'approval_threshold_usdc' })} testid="out" />);
  expect(screen.getByTestId('out').textContent).toBe('pending approval · decided by Approval from');
});

test("the figures counted, the deciding rule's standing out; no limit said as such", () => {
  render(<Figures r={preview()} />);
  expect(screen.getByTestId('preview-remaining').parentElement!.dataset.deciding).toBe('true');
  expect(screen.getByTestId('preview-remaining-week').textContent).toBe('no weekly limit');
  expect(screen.getByTestId('preview-hour').textContent).toBe('1 of 4');
  expect(screen.getByTestId('preview-day').textContent).toBe('2 (no limit)');
  expect(screen.getByTestId('preview-within').textContent).toBe('no active hours');
  expect(document.querySelectorAll('[data-deciding]')).toHaveLength(1);
});

test('a EUR payment shows the EUR day first, and it can be the deciding figure', () => {
  render(
    <Figures
      r={preview({ asset: 'EURC', currency: 'EUR', rule: 'daily_limit_eur', daily_limit_eur: 20, spent_today_eur: 18, remaining_today_eur: 2 })}
    />,
  );
  expect(screen.getByTestId('preview-remaining-eur').textContent).toBe('2.00 EUR');
  expect(screen.getByText('Spent today (EUR)').nextElementSibling?.textContent).toBe('18.00 EUR');
  expect(screen.getByTestId('preview-remaining-eur').parentElement?.dataset.deciding).toBe('true');
});
