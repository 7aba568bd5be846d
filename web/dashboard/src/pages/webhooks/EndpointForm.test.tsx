import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { toEndpoint } from '../../services/webhooks';
import { EndpointForm, blank, draftOf, settingsOf } from './EndpointForm';

const endpoint = toEndpoint({
  id: 'e1',
  url: 'https://hooks.test/a',
  format: 'slack',
  events: ['approval.pending', 'tx.sent'],
  description: null,
  enabled: false,
  slack_approvers: ['U1', 'U2'],
  created_at: '2026-04-01T12:00:00Z',
  updated_at: '2026-04-01T12:00:00Z',
  previous_secret_expires_at: null,
});

test('an endpoint as a draft, and back: events in the list order, approvers split, an empty description cleared on a change only', () => {
  const d = draftOf(endpoint);
  expect(d).toEqual({
    url: 'https://hooks.test/a',
    format: 'slack',
    events: ['approval.pending', 'tx.sent'],
    description: '',
    enabled: false,
    approvers: 'U1, U2',
  });
  expect(settingsOf({ ...d, approvers: ' U1,U3  U4 ' }, false)).toEqual({
    url: 'https://hooks.test/a',
    format: 'slack',
    events: ['tx.sent', 'approval.pending'],
    description: '',
    enabled: false,
    slack_approvers: ['U1', 'U3', 'U4'],
  });
  expect(settingsOf({ ...blank, url: ' https://x.test ', events: ['tx.sent'] }, true)).toEqual({
    url: 'https://x.test',
    format: 'json',
    events: ['tx.sent'],
    enabled: true,
  });
});

test('needs a URL and an event; a saved form starts over, a refused one keeps what was typed', async () => {
  const onSubmit = vi.fn().mockResolvedValueOnce(false).mockResolvedValueOnce(true);
  render(<EndpointForm initial={blank} creating label="Create an endpoint" submit="Create endpoint" onSubmit={onSubmit} onCancel={() => {}} />);
  const user = userEvent.setup();
  const create = screen.getByRole('button', { name: 'Create endpoint' }) as HTMLButtonElement;
  expect(create.disabled).toBe(true);
  expect(screen.getByText('Pick at least one event.')).toBeTruthy();
  await user.type(screen.getByLabelText('URL'), 'https://hooks.test/b');
  await user.click(screen.getByRole('checkbox', { name: /^tx\.failed/ }));
  expect(screen.queryByLabelText('Slack approvers')).toBeNull();
  await user.click(create);
  expect(onSubmit).toHaveBeenLastCalledWith({ url: 'https://hooks.test/b', format: 'json', events: ['tx.failed'], enabled: true });
  expect((screen.getByLabelText('URL') as HTMLInputElement).value).toBe('https://hooks.test/b');
  await user.click(create);
  expect((screen.getByLabelText('URL') as HTMLInputElement).value).toBe('');
});

test('Slack asks for its approvers', async () => {
  render(<EndpointForm initial={blank} creating label="Create an endpoint" submit="Create endpoint" onSubmit={vi.fn()} onCancel={() => {}} />);
  await userEvent.selectOptions(screen.getByLabelText('Format'), 'slack');
  expect(screen.getByLabelText('Slack approvers')).toBeTruthy();
});

test('an MPP charge that expired unsent can be subscribed to, beside the x402 payment’s, in the list order', async () => {
  const onSubmit = vi.fn().mockResolvedValue(true);
  render(<EndpointForm initial={blank} creating label="Create an endpoint" submit="Create endpoint" onSubmit={onSubmit} onCancel={() => {}} />);
  const user = userEvent.setup();
  await user.type(screen.getByLabelText('URL'), 'https://hooks.test/c');
  await user.click(screen.getByRole('checkbox', { name: /^mpp\.expired.*a signed MPP charge was never broadcast/ }));
  await user.click(screen.getByRole('checkbox', { name: /^x402\.expired/ }));
  await user.click(screen.getByRole('button', { name: 'Create endpoint' }));
  expect(onSubmit).toHaveBeenLastCalledWith({ url: 'https://hooks.test/c', format: 'json', events: ['x402.expired', 'mpp.expired'], enabled: true });
});
