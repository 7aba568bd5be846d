import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { recordedFetch } from '../../test-render';
import { SponsorOn } from './SponsorOn';

test('turns sponsorship on (PUT enabled), then reads again', async () => {
  const requests = recordedFetch(() => ({ status: 200, body: {} }));
  const onChange = vi.fn();
  render(<SponsorOn onChange={onChange} />);
  await userEvent.click(screen.getByRole('button', { name: 'Turn on fee sponsorship' }));
  await vi.waitFor(() => expect(onChange).toHaveBeenCalledOnce());
  expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([['PUT', '/api/public/v1/fee-payer', { enabled: true }]]);
});

test('a refusal says why and reads nothing again', async () => {
  recordedFetch(() => ({ status: 409, body: { error: 'no fee payer key' } }));
  const onChange = vi.fn();
  render(<SponsorOn onChange={onChange} />);
  await userEvent.click(screen.getByRole('button', { name: 'Turn on fee sponsorship' }));
  expect((await screen.findByRole('alert')).textContent).toBe('no fee payer key');
  expect(onChange).not.toHaveBeenCalled();
});
