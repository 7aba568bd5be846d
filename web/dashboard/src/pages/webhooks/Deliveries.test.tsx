import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import { setCSRF } from '../../services/api';
import { type DeliveryFromAPI, toDelivery } from '../../services/webhooks';
import { recordedFetch, renderRoute } from '../../test-render';
import { Deliveries, mergeDeliveries } from './Deliveries';

const EP = 'e0000000-0000-4000-8000-000000000001';
const api = (id: string, minute: number, d: Partial<DeliveryFromAPI> = {}): DeliveryFromAPI => ({
  id,
  endpoint_id: EP,
  event: 'tx.sent',
  event_id: `evt_${id}`,
  status: 'succeeded',
  attempts: 1,
  replay_of: null,
  created_at: `2026-04-01T12:${String(minute).padStart(2, '0')}:00Z`,
  last_attempt_at: null,
  completed_at: null,
  ...d,
});
const delivery = (id: string, minute: number, d: Partial<DeliveryFromAPI> = {}) => toDelivery(api(id, minute, d));
const ids = (ds: { id: string }[] | null) => ds?.map((d) => d.id) ?? null;

beforeEach(() => setCSRF('csrf'));

describe('mergeDeliveries', () => {
  test('until the first page is read, the pages loaded', () => {
    expect(mergeDeliveries(undefined, null)).toBeNull();
    expect(ids(mergeDeliveries(undefined, [delivery('a', 5)]))).toEqual(['a']);
  });

  test('a first page that is the whole log is the log', () => {
    expect(ids(mergeDeliveries({ items: [delivery('b', 6)], nextCursor: null }, [delivery('a', 5)]))).toEqual(['b']);
  });

  test('the first page is the truth for its span; older pages follow, without repeats or what left the span', () => {
    const head = { items: [delivery('d', 9), delivery('c', 8)], nextCursor: 'cur' };
    const older = [delivery('c', 8), delivery('x', 8, { status: 'failed' }), delivery('late', 9), delivery('b', 7), delivery('a', 6)];
    expect(ids(mergeDeliveries(head, older))).toEqual(['d', 'c', 'x', 'b', 'a']);
  });
});

test('each delivery with its status, attempts and replays; an owner replays one and hears its new id', async () => {
  const requests = recordedFetch((r) => {
    if (r.method === 'POST') return { status: 201, body: api('f0000000-new', 10, { replay_of: 'a' }) };
    return {
      status: 200,
      body: { deliveries: [api('b', 7, { attempts: 2, replay_of: 'z' }), api('a', 6, { status: 'failed' })], next_cursor: null },
    };
  });
  const onReplayed = vi.fn();
  renderRoute('/t', <Deliveries endpointID={EP} format="json" status="" owner onReplayed={onReplayed} onError={() => {}} />);
  const list = await screen.findByRole('list', { name: 'Deliveries' });
  const items = within(list).getAllByRole('listitem');
  expect(items.map((li) => li.dataset.status)).toEqual(['succeeded', 'failed']);
  expect(items[0].textContent).toContain('2 attempts · replay');
  await userEvent.click(within(items[1]).getByRole('button', { name: 'Replay' }));
  await vi.waitFor(() => expect(onReplayed).toHaveBeenCalledWith('Replayed tx.sent as a new delivery (f0000000).'));
  expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/api/public/v1/deliveries/a/replay']);
});

test('none of a status says how to see the others; a viewer cannot replay', async () => {
  recordedFetch(() => ({ status: 200, body: { deliveries: [], next_cursor: null } }));
  renderRoute('/t', <Deliveries endpointID={EP} format="json" status="failed" owner={false} onReplayed={() => {}} onError={() => {}} />);
  expect(await screen.findByText('No deliveries failed.')).toBeTruthy();
  expect(screen.getByText('Pick “any” status to see every delivery.')).toBeTruthy();
  expect(screen.queryByRole('button', { name: 'Replay' })).toBeNull();
});
