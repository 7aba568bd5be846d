// The shared parts every page uses, as a person meets them: a status that
// reads without colour, a time relative with its exact moment on hover, a
// confirmation that sends nothing until it is confirmed, and the pieces of
// the lists and forms.
import { act, render, renderHook, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, test, vi } from 'vitest';
import { Address } from './Address';
import { ConfirmDialog } from './ConfirmDialog';
import { Form, useDraft } from './Form';
import { LoadMore, itemsOf } from './LoadMore';
import { Middle } from './Middle';
import { Status, toneOf } from './Status';
import { Table } from './Table';
import { Time } from './Time';

describe('Status', () => {
  test.each([
    ['sent', 'ok'],
    ['confirmed', 'ok'],
    ['failed', 'bad'],
    ['rejected', 'bad'],
    ['pending', 'warn'],
    ['frozen', 'info'],
    ['something new', 'neutral'],
  ])('%s reads as %s', (status, tone) => {
    expect(toneOf(status)).toBe(tone);
  });

  test('the word is the text, with an icon beside it, so it reads without colour', () => {
    render(<Status status="failed" testId="status" />);
    const badge = screen.getByTestId('status');
    expect(badge.textContent).toBe('failed');
    expect(badge.querySelector('svg')).not.toBeNull();
    expect(badge.className).toContain('badge-bad');
  });

  test('a label replaces the word, and a tone given wins', () => {
    render(<Status status="pending_approval" label="waits for you" tone="info" testId="status" />);
    expect(screen.getByTestId('status').textContent).toBe('waits for you');
    expect(screen.getByTestId('status').className).toContain('badge-info');
  });
});

describe('Time', () => {
  const now = Date.parse('2026-04-01T12:10:00Z');

  test('relative, with the exact time in UTC on hover and in the markup', () => {
    render(<Time at="2026-04-01T12:05:00Z" now={now} />);
    const t = screen.getByText('5 minutes ago');
    expect(t.tagName).toBe('TIME');
    expect(t.getAttribute('dateTime')).toBe('2026-04-01T12:05:00Z');
    expect(t.getAttribute('title')).toBe('1 Apr 2026, 12:05 UTC');
  });

  test('in the future it says so', () => {
    render(<Time at="2026-04-01T14:10:00Z" now={now} />);
    expect(screen.getByText('in about 2 hours')).toBeTruthy();
  });

  test('no time is a dash', () => {
    const { container } = render(<Time at={null} now={now} />);
    expect(container.textContent).toBe('—');
    expect(container.querySelector('time')).toBeNull();
  });
});

describe('ConfirmDialog', () => {
  const dialog = (props: Partial<Parameters<typeof ConfirmDialog>[0]> = {}) => {
    const onConfirm = vi.fn();
    const onClose = vi.fn();
    render(
      <ConfirmDialog open title="Confirm approval" confirm="Confirm approval" onConfirm={onConfirm} onClose={onClose} {...props}>
        <p>Approve and send 25.00 USDC?</p>
      </ConfirmDialog>,
    );
    return { onConfirm, onClose };
  };

  test('says what it confirms; Confirm confirms once and Cancel only closes', async () => {
    const { onConfirm, onClose } = dialog();
    const user = userEvent.setup();
    const d = await screen.findByRole('alertdialog', { name: 'Confirm approval' });
    expect(d.textContent).toContain('Approve and send 25.00 USDC?');
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onClose).toHaveBeenCalledOnce();
    expect(onConfirm).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Confirm approval' }));
    expect(onConfirm).toHaveBeenCalledOnce();
  });

  test('while busy nothing can be pressed twice, and an error is announced', async () => {
    const { onConfirm } = dialog({ busy: true, error: 'approval is not pending' });
    await screen.findByRole('alertdialog', { name: 'Confirm approval' });
    expect((screen.getByRole('button', { name: 'Confirm approval' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByRole('alert').textContent).toBe('approval is not pending');
    expect(onConfirm).not.toHaveBeenCalled();
  });

  test('closed, it shows nothing', () => {
    dialog({ open: false });
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });
});

describe('Middle', () => {
  const address = '7Whf6J3tgBwhFeBz68Uq1qiKEPR6nXPfNCCsVEQhjX1b';

  test('a long value is cut in the middle by CSS only: its text and its title are the whole of it', () => {
    const { container } = render(<Middle text={address} />);
    const shown = container.firstElementChild!;
    expect(shown.textContent).toBe(address);
    expect(shown.getAttribute('title')).toBe(address);
    expect(shown.className).toContain('middle');
    // The start gives way; the end stays.
    expect([...shown.children].map((c) => c.textContent)).toEqual([address.slice(0, -6), address.slice(-6)]);
  });

  test('a short value is left whole', () => {
    const { container } = render(<Middle text="ap_12345" />);
    expect(container.innerHTML).toBe('<span class="">ap_12345</span>');
  });
});

describe('Address', () => {
  test('cut short on one line, the whole of it in the title', () => {
    const address = '7Whf6J3tgBwhFeBz68Uq1qiKEPR6nXPfNCCsVEQhjX1b';
    const { container } = render(<Address value={address} />);
    const code = container.querySelector('code')!;
    expect(code.textContent).toBe('7Whf…jX1b');
    expect(code.getAttribute('title')).toBe(address);
    expect(code.className).toBe('whitespace-nowrap');
  });
});

describe('Table', () => {
  test('its headings in order, a column of numbers aligned right, a column given as false left out, then its rows', () => {
    render(
      <Table label="Keys" columns={['Key', { name: 'Uses', num: true }, false, 'State']}>
        <tr>
          <td>k1</td>
          <td>3</td>
          <td>active</td>
        </tr>
      </Table>,
    );
    const table = screen.getByRole('table', { name: 'Keys' });
    expect(table.className).toBe('table');
    const heads = screen.getAllByRole('columnheader');
    expect(heads.map((h) => [h.textContent, h.getAttribute('scope'), h.className])).toEqual([
      ['Key', 'col', ''],
      ['Uses', 'col', 'num'],
      ['State', 'col', ''],
    ]);
    expect(screen.getAllByRole('cell').map((c) => c.textContent)).toEqual(['k1', '3', 'active']);
  });
});

describe('LoadMore', () => {
  const list = (more: Partial<Parameters<typeof LoadMore>[0]['list']> = {}) => ({
    hasNextPage: true,
    isFetchingNextPage: false,
    fetchNextPage: vi.fn(),
    ...more,
  });

  test('asks for the next page, not again while it loads, and is gone when there is none', async () => {
    const user = userEvent.setup();
    const l = list();
    const { rerender } = render(<LoadMore list={l}>More wallets</LoadMore>);
    await user.click(screen.getByRole('button', { name: 'More wallets' }));
    expect(l.fetchNextPage).toHaveBeenCalledOnce();
    const loading = list({ isFetchingNextPage: true });
    rerender(<LoadMore list={loading} />);
    await user.click(screen.getByRole('button', { name: 'Load more' }));
    expect(loading.fetchNextPage).not.toHaveBeenCalled();
    rerender(<LoadMore list={list({ hasNextPage: false })} />);
    expect(screen.queryByRole('button')).toBeNull();
  });

  test('itemsOf is the pages’ items in order, null before the first page', () => {
    expect(itemsOf(list())).toBeNull();
    const pages = [
      { items: [1, 2], nextCursor: 'c' },
      { items: [3], nextCursor: null },
    ];
    expect(itemsOf({ ...list(), data: { pages } })).toEqual([1, 2, 3]);
  });
});

describe('Form', () => {
  test('submitting runs onSubmit and loads no page', async () => {
    const user = userEvent.setup();
    const onSubmit = vi.fn();
    render(
      <Form aria-label="Search" noValidate onSubmit={onSubmit}>
        <button type="submit">Go</button>
      </Form>,
    );
    const form = screen.getByRole('form', { name: 'Search' }) as HTMLFormElement;
    expect(form.noValidate).toBe(true);
    // The document hears the submit after React's handler: the page's load was called off.
    const prevented: boolean[] = [];
    document.addEventListener('submit', (e) => prevented.push(e.defaultPrevented), { once: true });
    await user.click(screen.getByRole('button', { name: 'Go' }));
    expect(onSubmit).toHaveBeenCalledOnce();
    expect(prevented).toEqual([true]);
  });

  test('useDraft follows a changed filter and keeps what is typed while it stays', () => {
    const { result, rerender } = renderHook(({ filter }) => useDraft(filter), { initialProps: { filter: { q: 'a' } } });
    expect(result.current[0]).toEqual({ q: 'a' });
    // Typed, with the same filter (a new object of equal value) rendered again: kept.
    act(() => result.current[1]({ q: 'ab' }));
    rerender({ filter: { q: 'a' } });
    expect(result.current[0]).toEqual({ q: 'ab' });
    // Another filter (back, forward, a link): the draft is it.
    rerender({ filter: { q: 'z' } });
    expect(result.current[0]).toEqual({ q: 'z' });
  });
});
