// ESLint: the recommended JavaScript and TypeScript rules and the Rules of
// React (eslint-plugin-react-hooks, its React Compiler checks included).
// Formatting is Prettier's job (npm run format), not ESLint's.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores(['node_modules/', 'test/screenshots/', 'src/routeTree.gen.ts']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['src/**/*.{ts,tsx}', 'unit/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['*.{js,ts}'],
    languageOptions: { globals: globals.node },
  },
  {
    // The browser tests (node --test) drive Chromium from Node; the functions
    // they pass to page.evaluate run in the page.
    files: ['test/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    files: ['test/testwallet.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
  // Findings in files written before the linter, each more than a one-line
  // fix, switched off for those files only; drop each entry when its file is
  // rewritten.
  {
    // The editor resets its draft in an effect when the saved policy
    // changes; a tried send's result is dropped in an effect when the draft
    // changes.
    files: ['src/pages/wallets/policy/PolicyEditor.tsx', 'src/pages/wallets/policy/TrySend.tsx'],
    rules: { 'react-hooks/set-state-in-effect': 'off' },
  },
  {
    // The editor follows the policy on screen by its JSON key.
    files: ['src/pages/wallets/policy/PolicyEditor.tsx'],
    rules: { 'react-hooks/exhaustive-deps': 'off' },
  },
  {
    // TrySend keeps the policy key of the latest render in a ref, written
    // during render, to drop answers to a question about an older draft.
    files: ['src/pages/wallets/policy/TrySend.tsx'],
    rules: { 'react-hooks/refs': 'off' },
  },
  {
    // The approval's countdown falls back to Date.now() during render while
    // the approval loads.
    files: ['src/pages/approvals/ApprovalPage.tsx'],
    rules: { 'react-hooks/purity': 'off' },
  },
]);
