// ESLint over every source file of the repository (src/, test/, bench/, scripts/, examples/, packages/,
// console/src/): typescript-eslint's recommended rules, plus those of its type-checked rules that catch real
// bugs (a promise nobody awaits, a promise where a callback's result is dropped, an object printed as
// "[object Object]", a throw of a non-Error). Each TypeScript file is typed by the nearest tsconfig.json
// (projectService): console/src/ by console/tsconfig.json, the rest by the root one. `npm run lint`;
// `npm test` runs it after tsc.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    'coverage/',
    'bench-results/',
    'test-artifacts/',
    'data/',
    // Written by npm run client:generate from docs/openapi.json.
    'packages/client/src/generated/',
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Off: the code matches control characters on purpose (NUL and the C0 range refused in input, socket.io's
      // record separator in tests).
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    // From recommendedTypeChecked, the rules that catch bugs. Left out: the no-unsafe-* family and
    // no-explicit-any (tests read JSON answers as any on purpose), unbound-method (Kysely's expression builder
    // is destructured by design, and our interfaces declare bound closures in method syntax),
    // require-await and no-unnecessary-type-assertion (style, not bugs).
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-array-delete': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/no-base-to-string': 'error',
      '@typescript-eslint/restrict-plus-operands': 'error',
      '@typescript-eslint/restrict-template-expressions': 'error',
      '@typescript-eslint/no-implied-eval': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // As only-throw-error does by default: an abort signal's reason (typed any) is passed on, as fetch does.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/no-unsafe-unary-minus': 'error',
      '@typescript-eslint/no-duplicate-type-constituents': 'error',
    },
  },
  {
    // Off: Kysely's way for migrations (Kysely<any>), which must not depend on today's table types.
    files: [
      'src/store/schema/migrations.ts',
      'src/store/schema/migration-helpers.ts',
      'src/store/schema/migrations/*.ts',
    ],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain JavaScript run by Node (this file, bench/sql-times.cjs, a preload): Node's globals.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    // CommonJS is the point of a .cjs file (a --require preload).
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
