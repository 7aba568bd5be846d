import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test } from 'vitest';
import { recordedFetch, renderRoute } from '../../test-render';
import { DeliveryLog } from './DeliveryLog';

const EP = 'e0000000-0000-4000-8000-000000000001';

test('the status filter is in the URL: a link opens it, a choice is put there, and the list asks for it', async () => {
  const requests = recordedFetch(() => ({ status: 200, body: { deliveries: [], next_cursor: null } }));
  const { router } = renderRoute(
    `/webhooks/${EP}?status=failed`,
    <DeliveryLog endpointID={EP} format="json" owner onReplayed={() => {}} onError={() => {}} />,
    '/webhooks/$id',
  );
  const status = (await screen.findByLabelText('Status')) as HTMLSelectElement;
  expect(status.value).toBe('failed');
  await screen.findByText('No deliveries failed.');
  await userEvent.selectOptions(status, 'succeeded');
  await screen.findByText('No deliveries succeeded.');
  expect(router.state.location.search).toEqual({ status: 'succeeded' });
  await userEvent.selectOptions(status, '');
  await screen.findByText('No deliveries.');
  expect(router.state.location.search).toEqual({});
  expect(new Set(requests.map((r) => new URL(r.path, 'http://x').searchParams.get('status')))).toEqual(new Set(['failed', 'succeeded', null]));
});
