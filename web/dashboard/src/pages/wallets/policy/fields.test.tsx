import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, test, vi } from 'vitest';
import { NumberField, TimeField } from './fields';

test('a number shows its hint until it has a problem, which replaces it and marks the field invalid', async () => {
  const onChange = vi.fn();
  const { rerender } = render(<NumberField id="f" label="Daily limit" hint="a day" unit="USDC" value="10" problem="" onChange={onChange} />);
  const input = screen.getByLabelText('Daily limit');
  expect(input.getAttribute('inputMode')).toBe('decimal');
  expect(input.getAttribute('aria-invalid')).toBe('false');
  expect(screen.getByText('a day').id).toBe(input.getAttribute('aria-describedby'));
  expect(input.parentElement!.textContent).toBe(' USDC');
  await userEvent.type(input, '5');
  expect(onChange).toHaveBeenLastCalledWith('105');
  rerender(<NumberField id="f" label="Daily limit" hint="a day" value="x" problem="Not a number." decimal={false} onChange={onChange} />);
  expect(input.getAttribute('aria-invalid')).toBe('true');
  expect(input.getAttribute('inputMode')).toBe('numeric');
  expect(screen.getByText('Not a number.').className).toBe('field-error');
  expect(screen.queryByText('a day')).toBeNull();
});

test('a time shows its note, or its problem', () => {
  const { rerender } = render(<TimeField id="t" label="Closes at" value="00:00" problem="" note="Midnight." onChange={() => {}} />);
  expect(screen.getByText('Midnight.').className).toBe('hint');
  rerender(<TimeField id="t" label="Closes at" value="" problem="Give a time." note="Midnight." onChange={() => {}} />);
  expect(screen.getByLabelText('Closes at').getAttribute('aria-invalid')).toBe('true');
  expect(screen.getByText('Give a time.').className).toBe('field-error');
});
