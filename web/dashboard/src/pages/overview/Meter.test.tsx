import { render, screen } from '@testing-library/react';
import { expect, test } from 'vitest';
import { Meter } from './Meter';

test.each([
  [0.5, '', 'bg-ok'],
  [0.8, 'high', 'bg-warn'],
  [1, 'full', 'bg-bad'],
])('a share of %s is level "%s", its bar %s, as wide as the share', (share, level, bar) => {
  render(<Meter share={share} label="spend" max={100} value={share * 100} text={`${share * 100} of 100`} />);
  const meter = screen.getByRole('meter', { name: 'spend' });
  expect(meter.className.split(' ').includes('full')).toBe(level === 'full');
  expect(meter.className.split(' ').includes('high')).toBe(level === 'high');
  expect(meter.getAttribute('aria-valuetext')).toBe(`${share * 100} of 100`);
  const fill = meter.firstElementChild as HTMLElement;
  expect(fill.className).toContain(bar);
  expect(fill.style.width).toBe(`${share * 100}%`);
});
