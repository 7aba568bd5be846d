import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { expect, test } from 'vitest';
import { ActiveHoursFields } from './ActiveHoursFields';
import { DEFAULT_DRAFT, type Draft, problemsOf } from './policy-draft';

function Hours({ start }: { start: Draft }) {
  const [draft, setDraft] = useState(start);
  return <ActiveHoursFields prefix="t" draft={draft} problems={problemsOf(draft)} onChange={setDraft} />;
}

test('any time until set; set, weekdays 09:00 to 18:00, an overnight close and a day unticked; then removed', async () => {
  const user = userEvent.setup();
  render(<Hours start={{ ...DEFAULT_DRAFT, hours: null }} />);
  expect(screen.getByText('Any time: the agent may pay at any hour of any day.')).toBeTruthy();
  await user.click(screen.getByRole('button', { name: 'Set active hours' }));
  expect((screen.getByLabelText('Opens at') as HTMLInputElement).value).toBe('09:00');
  expect(
    screen
      .getAllByRole('checkbox')
      .filter((c) => (c as HTMLInputElement).checked)
      .map((c) => c.getAttribute('aria-label')),
  ).toEqual(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']);
  const close = screen.getByLabelText('Closes at');
  await user.clear(close);
  await user.type(close, '06:00');
  expect(screen.getByText('The next morning (overnight).')).toBeTruthy();
  for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) await user.click(screen.getByRole('checkbox', { name: day }));
  expect(document.getElementById('t-hours-days-note')!.textContent).not.toBe('');
  await user.click(screen.getByRole('radio', { name: 'Parked for approval, whatever its amount' }));
  expect((screen.getByRole('radio', { name: 'Parked for approval, whatever its amount' }) as HTMLInputElement).checked).toBe(true);
  await user.click(screen.getByRole('button', { name: 'Remove active hours' }));
  expect(screen.getByRole('button', { name: 'Set active hours' })).toBeTruthy();
});
