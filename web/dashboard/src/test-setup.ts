// Vitest runs this before each test file: every test starts with an empty page.
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// findBy* and waitFor give up after 1 s by default: on a loaded 2-core
// machine (the Go suites beside these) a dialog can take longer to render.
// A wait that is met returns at once, so a passing run is no slower.
configure({ asyncUtilTimeout: 10_000 });

afterEach(() => {
  cleanup();
});
