// Vitest runs this before each test file: every test starts with an empty page.
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

afterEach(() => {
  cleanup();
});
