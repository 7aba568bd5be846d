import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { approval, session } from '../../test-fixtures';
import { ApprovalFacts } from './ApprovalFacts';

const NOW = Date.parse('2026-04-01T12:30:00Z');
const field = (term: string) => screen.getByText(term, { selector: 'dt' }).nextElementSibling?.textContent;

test('pending: when it expires, who asked (the key when the context is not read)', () => {
  render(<ApprovalFacts a={approval()} ctx={null} now={NOW} session={session()} />);
  expect(field('Expires')).toBe('in 1 h 30 min (1 Apr 2026, 14:00 UTC)');
  expect(field('Asked by')).toBe('key 1b2c3d4e…');
  expect(field('Asked')).toBe('30 minutes ago');
  expect(screen.queryByText('Decided')).toBeNull();
});

test('decided: when and by whom, the note, the signature on the explorer, why it was rejected', () => {
  render(
    <ApprovalFacts
      a={approval({
        status: 'rejected',
        decided_at: '2026-04-01T12:10:00Z',
        rejected_by: 'user:9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
        note: 'too much',
        signature: 'SIG',
        reason: 'policy_violation_at_approval',
        reason_detail: 'exceeds_daily_limit',
      })}
      ctx={null}
      now={NOW}
      session={session()}
    />,
  );
  expect(field('Decided')).toBe('20 minutes ago · rejected by user 9WzD…AWWM');
  expect(field('Note')).toBe('too much');
  expect(screen.getByRole('link', { name: 'View on the explorer' }).getAttribute('href')).toBe('https://explorer.solana.com/tx/SIG?cluster=devnet');
  expect(screen.getByTestId('reason').textContent).toBe('policy_violation_at_approval (exceeds_daily_limit)');
});

test('a purchase names what it buys and what the seller says', () => {
  render(
    <ApprovalFacts
      a={approval({ kind: 'x402', resource: 'https://seller.test/report', description: 'a report' })}
      ctx={null}
      now={NOW}
      session={session()}
    />,
  );
  expect(field('Buys (x402)')).toBe('https://seller.test/report');
  expect(field('Seller says')).toBe('a report');
});

test('an MPP charge names what it buys, the seller as it names itself, and what it says', () => {
  render(
    <ApprovalFacts
      a={approval({ kind: 'mpp', resource: 'https://seller.test/forecast', realm: 'seller.test', description: null })}
      ctx={null}
      now={NOW}
      session={session()}
    />,
  );
  expect(field('Buys (MPP)')).toBe('https://seller.test/forecast');
  expect(field('Seller says it is')).toBe('seller.test');
  expect(field('Seller says')).toBe('—');
  expect(screen.queryByText('Buys (x402)')).toBeNull();
});
