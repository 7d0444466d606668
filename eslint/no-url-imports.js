// @ts-check
/**
 * `import()` takes a string literal in the product and the packages: a path built at run time
 * (`import(new URL('../x.js', import.meta.url).href)`) is invisible to the bundler, to the package's
 * file list and to dependency-cruiser, so it could reach any file. bench/, scripts/ and test/ load
 * built files by path on purpose, and are not covered.
 */
export const noUrlImports = {
  files: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
  rules: {
    'no-restricted-syntax': [
      'error',
      {
        selector: "ImportExpression[source.type!='Literal']",
        message: 'import() takes a string literal: every dependency must be visible to the build and to depcruise',
      },
    ],
  },
};
