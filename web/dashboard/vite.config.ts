import tailwindcss from '@tailwindcss/vite';
import { tanstackRouter } from '@tanstack/router-plugin/vite';
import { defineConfig } from 'vite';

// The dashboard is served by the api binary under /dashboard/ from the
// files embedded in internal/dashboard (dist/app is not committed).
export default defineConfig({
  base: '/dashboard/',
  plugins: [
    // The routes are files (src/routes): the plugin writes src/routeTree.gen.ts
    // from them (committed, so tsc checks a fresh clone before any build) and
    // puts each route's component in a chunk of its own, loaded when the
    // route is first shown, unless the route keeps it (codeSplitGroupings: []).
    // A route's schema (*.schema.ts) and tests beside it are not routes.
    tanstackRouter({
      target: 'react',
      autoCodeSplitting: true,
      routeFileIgnorePattern: '\\.(schema|test)\\.tsx?$',
      quoteStyle: 'single',
    }),
    // Tailwind CSS builds the one stylesheet (src/index.css) from the classes the sources use.
    tailwindcss(),
  ],
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
          groups: [
            { name: 'vendor', test: /node_modules[\\/](react|react-dom|scheduler|@tanstack)[\\/]/ },
            // The API's client, one module per resource: every route's loader
            // (in the first chunk) uses them, so they load as one file.
            { name: 'services', test: /src[\\/](services[\\/]|search\.ts|session\.tsx)/ },
          ],
        },
      },
    },
  },
});
