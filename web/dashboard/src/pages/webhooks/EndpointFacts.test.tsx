import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { toEndpoint } from '../../services/webhooks';
import { EndpointFacts } from './EndpointFacts';

const field = (term: string) => screen.queryByText(term, { selector: 'dt' })?.nextElementSibling?.textContent;
const endpoint = (e: Partial<Parameters<typeof toEndpoint>[0]> = {}) =>
  toEndpoint({
    id: 'e1',
    url: 'https://hooks.test/a',
    format: 'json',
    events: ['tx.sent', 'tx.failed'],
    description: null,
    enabled: true,
    slack_approvers: [],
    created_at: '2026-04-01T12:00:00Z',
    updated_at: '2026-04-01T12:00:05Z',
    previous_secret_expires_at: null,
    ...e,
  });

test('a JSON endpoint: its state, events, times to the second; no Slack approvers, no previous secret', () => {
  render(<EndpointFacts endpoint={endpoint()} />);
  expect(screen.getByTestId('state').textContent).toBe('enabled');
  expect(screen.getByTestId('events').textContent).toBe('tx.sent, tx.failed');
  expect(screen.getByTestId('description').textContent).toBe('—');
  expect(field('Changed')).toBe('1 Apr 2026, 12:00:05 UTC');
  expect(field('Slack approvers')).toBeUndefined();
  expect(field('Previous secret')).toBeUndefined();
});

test('a disabled Slack endpoint after a rotation', () => {
  render(<EndpointFacts endpoint={endpoint({ format: 'slack', enabled: false, previous_secret_expires_at: '2026-04-02T12:00:00Z' })} />);
  expect(screen.getByTestId('state').textContent).toBe('disabled: receives nothing new');
  expect(field('Slack approvers')).toBe('anyone in the channel');
  expect(field('Previous secret')).toBe('still signs until 2 Apr 2026, 12:00:00 UTC');
});
