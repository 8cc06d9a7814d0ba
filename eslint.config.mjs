// The linter CI runs (`npm run lint`, docs/testing.md): imports once each and sorted, no `any`
// outside the tests, no promise left floating (a background task says so with `void`).
import tseslint from 'typescript-eslint';
import simpleImportSort from 'eslint-plugin-simple-import-sort';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'dist.building-*/**',
      'client/dist/**',
      'client/console/dist/**',
      'client/console/dist.building-*/**',
      'client/node_modules/**',
      'client/src/schema.ts',
      'test/fixtures/**',
      'tools/patches/**',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, 'simple-import-sort': simpleImportSort },
    rules: {
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // Components name an error's kind; only the edge's mapper and the worker's wrapper know
    // statuses (docs/architecture.md, "Errors: components name kinds").
    files: ['activities/**/*.ts', 'edge/**/*.ts', 'workers/**/*.ts', 'workflows/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='PlatformError'][arguments.0.type='Literal'][arguments.0.raw=/^[0-9]/]",
          message: 'name the kind of the error (activities/core/errors.ts ErrorKind), not an HTTP status',
        },
      ],
    },
  },
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
