import { defineConfig } from 'vite';

// The dashboard is served by the api binary under /dashboard/ from the
// files embedded in internal/dashboard (dist/app is not committed).
export default defineConfig({
  base: '/dashboard/',
  build: {
    outDir: '../../internal/dashboard/dist/app',
    emptyOutDir: true,
    sourcemap: false,
  },
});
