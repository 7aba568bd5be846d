import tailwindcss from '@tailwindcss/vite';
import { defineConfig } from 'vite';

// The dashboard is served by the api binary under /dashboard/ from the
// files embedded in internal/dashboard (dist/app is not committed).
export default defineConfig({
  base: '/dashboard/',
  // Tailwind CSS builds the one stylesheet (src/index.css) from the classes the sources use.
  plugins: [tailwindcss()],
  build: {
    outDir: '../../internal/dashboard/dist/app',
    emptyOutDir: true,
    sourcemap: false,
    rolldownOptions: {
      // TanStack Query's "use client" directives are for React server
      // components; this app renders only in the browser.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      output: {
        codeSplitting: {
          groups: [{ name: 'vendor', test: /node_modules[\\/](react|react-dom|scheduler|@tanstack)[\\/]/ }],
        },
      },
    },
  },
});
