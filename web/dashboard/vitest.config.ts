// Vitest: the unit and component tests (src/**/*.test.ts(x)) in happy-dom.
// The browser tests under test/ run in Chromium with node --test instead.
import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

export default mergeConfig(
  viteConfig,
  defineConfig({
    test: {
      environment: 'happy-dom',
      include: ['src/**/*.test.{ts,tsx}'],
      setupFiles: ['src/test-setup.ts'],
      restoreMocks: true,
      // Typing tests on a loaded 2-core machine can pass vitest's 5 s; a
      // test that times out keeps typing into the next test's page.
      testTimeout: 20_000,
      unstubGlobals: true,
    },
  }),
);
