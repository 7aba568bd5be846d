import { render, screen, within } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { beforeEach, expect, test } from 'vitest';
import type { DeliveryDetailFromAPI } from '../../services/webhooks';
import { queryClient } from '../../services/queryClient';
import { recordedFetch } from '../../test-render';
import { DeliveryDetail } from './DeliveryDetail';

const detail = (d: Partial<DeliveryDetailFromAPI> = {}): DeliveryDetailFromAPI => ({
  id: 'd1',
  endpoint_id: 'e1',
  event: 'tx.sent',
  event_id: 'evt_1',
  status: 'failed',
  attempts: 2,
  replay_of: 'd0',
  created_at: '2026-04-01T12:00:00Z',
  last_attempt_at: '2026-04-01T12:00:03Z',
  completed_at: '2026-04-01T12:00:03Z',
  payload: { event: 'tx.sent', data: { amount: 1 } },
  attempt_log: [
    { n: 1, at: '2026-04-01T12:00:01Z', status_code: null, latency_ms: 3000, error: 'timeout', response_head: null },
    { n: 2, at: '2026-04-01T12:00:03Z', status_code: 500, latency_ms: 12, error: null, response_head: 'Internal error' },
  ],
  ...d,
});

beforeEach(() => queryClient.clear());

const show = () =>
  render(
    <QueryClientProvider client={queryClient}>
      <DeliveryDetail id="d1" format="slack" />
    </QueryClientProvider>,
  );

test('its ids, each attempt as a step of a timeline, and the payload a Slack endpoint gets a message from', async () => {
  recordedFetch(() => ({ status: 200, body: detail() }));
  show();
  const attempts = await screen.findByRole('list', { name: 'Attempts' });
  const steps = within(attempts).getAllByRole('listitem');
  expect(steps.map((li) => within(li).getByTestId('status-code').textContent)).toEqual(['no answer', '500']);
  expect(steps[0].textContent).toContain('timeout');
  expect(steps[1].textContent).toContain('Internal error');
  expect(steps[1].textContent).toContain('1 Apr 2026, 12:00:03 UTC');
  expect(screen.getByText(/replays/).textContent).toContain('Event evt_1 · delivery d1 · replays d0 · completed 1 Apr 2026, 12:00:03 UTC');
  expect(screen.getByText(/this Slack endpoint gets a message made from it/)).toBeTruthy();
  expect(JSON.parse(screen.getByTestId('payload').textContent!)).toEqual({ event: 'tx.sent', data: { amount: 1 } });
});

test('no attempt yet, and a read that fails says why', async () => {
  recordedFetch(() => ({ status: 200, body: detail({ status: 'pending', attempt_log: [], completed_at: null }) }));
  const { unmount } = show();
  expect(await screen.findByText('No attempt yet.')).toBeTruthy();
  unmount();
  queryClient.clear();
  recordedFetch(() => ({ status: 404, body: { error: 'not found' } }));
  show();
  expect(await screen.findByText('Could not load the delivery: not found')).toBeTruthy();
});
