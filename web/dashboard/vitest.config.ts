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
      unstubGlobals: true,
    },
  }),
);
