// Type-checked lint over src/ and test/: promises that are never awaited or handed to callbacks
// that ignore them are the bugs a proxy cannot afford (a rejected token refresh nobody sees).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bundle/**', 'bench/**', 'deploy/**', 'scripts/**', 'node_modules/**', 'coverage/**', '.tap/**', '.stryker-tmp/**', 'reports/**', '.node/**', 'eslint.config.mjs', 'src/**/*.generated.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // tap queues `test()` and `t.test()` itself and reports their failures: awaiting them is noise.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'tap', name: ['test'] }],
        allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }],
      }],
      // Fastify hooks and handlers are async by contract whether or not they await anything.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
    },
  },
  // Lines of src/ at most 120 characters, so that a passage copied into a review, an issue or a diff stays
  // visible without scrolling; strings, template literals, URLs and regular expressions may run longer (a
  // message or a pattern is read whole), comments may not (they rewrap). Tests keep their long assertions for now.
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-len': ['error', {
        code: 120,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignoreUrls: true,
        ignoreRegExpLiterals: true,
        ignoreComments: false,
      }],
    },
  },
  // The console's one browser script (src/console/templates/console.js): plain JavaScript, served as written.
  {
    files: ['src/console/templates/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { sourceType: 'module', parserOptions: { projectService: false, project: false }, globals: { window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly' } },
  },
)
