// The quorum's pieces as the approval page and the inbox show them: the
// count, who approved (the signed-in person marked), and whether the
// person already approved.
import { render, screen } from '@testing-library/react';
import { describe, expect, test } from 'vitest';
import { approval } from '../../test-fixtures';
import { QuorumBadge, QuorumFacts, approveQuestion, approvesCount, votedBy } from './Quorum';

const ME = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const OTHER = '5f0c7a3e8f0d4b1e9a530c2b8a6f4d21aaaaaaaaaaaa';

const vote = (by: string, person: string | null = by.startsWith('user:') ? by : null, note: string | null = null) => ({
  by,
  person,
  at: '2026-04-01T12:05:00Z',
  note,
});

describe('the count', () => {
  test('says nothing when one approve suffices and none was given', () => {
    expect(approvesCount(approval())).toBe('');
    const { container } = render(<QuorumBadge a={approval()} />);
    expect(container.textContent).toBe('');
  });
  test('is "1 of 2 approvals" while waiting for a second person', () => {
    const a = approval({ approvals_needed: 2, approvals: [vote(`user:${OTHER}`)] });
    expect(approvesCount(a)).toBe('1 of 2 approvals');
    render(<QuorumBadge a={a} />);
    expect(screen.getByTestId('quorum').textContent).toContain('1 of 2 approvals');
    expect(approveQuestion(approval({ approvals_needed: 3 }))).toContain('1 of 3 approvals');
    expect(approveQuestion(a)).toBe(''); // the last approve sends it: the page asks as before
  });
});

describe('who approved', () => {
  test('lists each approve, marks the signed-in person, and knows they voted (a key of theirs included)', () => {
    const a = approval({ approvals_needed: 2, approvals: [vote('key_8a1b2c3d-4e5f', `user:${ME}`, 'checked'), vote('slack:U0BEE', null)] });
    render(
      <dl>
        <QuorumFacts a={a} me={ME} />
      </dl>,
    );
    const items = screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(items[0]).toContain('key 8a1b2c3d');
    expect(items[0]).toContain('you');
    expect(items[0]).toContain('“checked”');
    expect(items[1]).toBe('Slack U0BEE');
    expect(votedBy(a, ME)).toBe(true);
    expect(votedBy(a, OTHER)).toBe(false);
  });
});
