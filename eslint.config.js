// ESLint for the whole monorepo: `npm run lint` (eslint, then every package's typecheck).
//
// typescript-eslint's type-aware rules need TypeScript's JavaScript API, which the native
// typescript@7 compiler the build uses does not ship. So the linter gets the classic compiler
// of the tools/ workspace (tools/node_modules/typescript, nested there so that the root's `tsc`
// stays the native one): every `require('typescript')` made inside this ESLint process resolves
// to it (only the linter runs here, never kernelkit code), and the root package.json's
// `overrides` lets typescript-eslint's `typescript` peer accept the root one.
import Module, { createRequire } from 'node:module';

const classicTypeScript = createRequire(new URL('./tools/package.json', import.meta.url)).resolve('typescript');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, request === 'typescript' ? classicTypeScript : request, ...rest);
};

const { default: js } = await import('@eslint/js');
const { default: tseslint } = await import('typescript-eslint');
const { default: globals } = await import('globals');
const { defineConfig } = await import('eslint/config');

const TYPED = ['packages/*/src/**/*.ts', 'packages/*/test/**/*.ts', 'packages/*/vitest.config.ts', 'apps/*/src/**/*.ts', 'apps/*/test/**/*.ts', 'apps/*/vitest.config.ts'];

export default defineConfig(
  {
    ignores: ['**/dist/**', 'docs/api/**', 'dist-packages/**'],
  },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: TYPED,
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        // One program for every package and app (src, test, vitest.config.ts): the libraries and
        // @types are loaded once, not once per package. Type errors are typecheck's job (tsc 7).
        project: ['tsconfig.lint.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection, or a test that passes
      // before its assertion ran); a promise where a void callback is expected, the same.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
);
