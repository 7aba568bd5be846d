import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { toEndpoint } from '../../services/webhooks';
import { Secret } from './Secret';

const shown = (previous: string | null) => ({
  ...toEndpoint({
    id: 'e1',
    url: 'https://hooks.test/a',
    format: 'json',
    events: ['tx.sent'],
    description: null,
    enabled: true,
    slack_approvers: [],
    created_at: '2026-04-01T12:00:00Z',
    updated_at: '2026-04-01T12:00:00Z',
    previous_secret_expires_at: previous,
  }),
  secret: 'whsec_abc',
});

test('the secret once, how to verify with it, and until when the previous one signs; only Done closes it', async () => {
  const onDone = vi.fn();
  render(<Secret shown={shown('2026-04-02T12:00:00Z')} title="New signing secret" onDone={onDone} />);
  const dialog = await screen.findByRole('dialog', { name: 'New signing secret' });
  expect(screen.getByTestId('new-secret').textContent).toBe('whsec_abc');
  expect(dialog.textContent).toContain('X-Service-Signature');
  expect(dialog.textContent).toContain('The previous secret also signs until 2 Apr 2026, 12:00:00 UTC.');
  await userEvent.keyboard('{Escape}');
  expect(onDone).not.toHaveBeenCalled();
  await userEvent.click(screen.getByRole('button', { name: 'Done' }));
  expect(onDone).toHaveBeenCalledOnce();
});

test('a first secret has no previous one', async () => {
  render(<Secret shown={shown(null)} title="New endpoint's signing secret" onDone={() => {}} />);
  expect((await screen.findByRole('dialog')).textContent).not.toContain('previous secret');
});
