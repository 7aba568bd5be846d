import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { CopyButton } from './CopyButton';

test('copies and says so, then is ready again', async () => {
  const user = userEvent.setup();
  const write = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue();
  render(<CopyButton text="Addr1" what="address" />);
  await user.click(screen.getByRole('button', { name: 'Copy address' }));
  expect(write).toHaveBeenCalledWith('Addr1');
  expect(screen.getByRole('button').textContent).toBe('Copied');
  await vi.waitFor(() => expect(screen.getByRole('button', { name: 'Copy address' })).toBeTruthy(), { timeout: 4000 });
});

test('a refused clipboard says to select the text', async () => {
  const user = userEvent.setup();
  vi.spyOn(navigator.clipboard, 'writeText').mockRejectedValue(new Error('denied'));
  render(<CopyButton text="Addr1" what="address" />);
  await user.click(screen.getByRole('button', { name: 'Copy address' }));
  expect(screen.getByRole('button', { name: 'Copy failed: select the text' })).toBeTruthy();
});
