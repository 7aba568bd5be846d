import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { ApprovalWebhook } from './ApprovalWebhook';

test('each delivery of the approval.pending event, and the event as sent', () => {
  render(
    <ApprovalWebhook
      webhook={{
        deliveries: [{ deliveryId: 'd1', endpointId: 'e1', format: 'slack', status: 'failed', url: 'https://hooks.test/a?x=1', attempts: 1 }],
        event: { event: 'approval.pending' },
      }}
    />,
  );
  expect(screen.getByRole('listitem').textContent).toBe('slack endpoint hooks.test: failed (1 attempt)');
  expect(JSON.parse(screen.getByTestId('payload').textContent!)).toEqual({ event: 'approval.pending' });
});

test('no endpoint subscribed, no event', () => {
  render(<ApprovalWebhook webhook={{ deliveries: [], event: null }} />);
  expect(screen.getByText('No endpoint was subscribed to approval.pending.')).toBeTruthy();
  expect(screen.queryByTestId('payload')).toBeNull();
});
