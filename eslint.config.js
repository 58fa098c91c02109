// Lint rules: typescript-eslint's type-aware recommendations. The ones that matter most for a job
// system are the promise rules: a forgotten `await` on a Redis write is a lost job.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "scripts/bench/msgpackr-extract-none/**", "docs/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test registers tests by calling test(); the promise it returns is the runner's to await.
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["test", "it", "describe", "suite"] },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      // An async method that does not await still returns a promise, which an interface may require.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Tests read JSON.parse results (payloads) field by field; typing every one would add noise, not safety.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      // A duration held to a fixed number fails on a busy machine (several test files at once on two
      // cores): assert order, drive the injectable clock, or bound a product deadline with
      // withinDeadline() from test/helpers/timing.ts, which adds a loaded machine's slack.
      "no-restricted-syntax": [
        "error",
        ...[
          "[left.type='Identifier'][left.name=/^(ms|seconds|elapsed|took)$|(Ms|Seconds|Elapsed)$/]",
          "[left.type='MemberExpression'][left.property.name=/^(ms|seconds|elapsed|took|durationMs)$/]",
        ].map((left) => ({
          selector: `CallExpression[callee.object.name='assert'] BinaryExpression[operator=/^<=?$/]${left}[right.type='Literal']`,
          message:
            "A duration bounded by a fixed number fails on a busy machine: assert order, use the injectable clock, " +
            "or withinDeadline() (test/helpers/timing.ts) for a deadline the product promises.",
        })),
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: globals.node,
    },
  },
  {
    // The package test's CommonJS app (test/package/tarball.test.ts): require() is the point of it.
    files: [
      "test/package/apps/cjs/src/**/*.js",
      "test/package/apps/cjs/node-test/**/*.js",
      "test/package/apps/cjs/jest/**/*.js",
    ],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Jest gives its test files test, expect, afterEach... as globals.
    files: ["test/package/apps/cjs/jest/**/*.js"],
    languageOptions: { globals: globals.jest },
  },
  {
    // The dashboard's browser script, served as is from the package.
    files: ["src/admin/web/assets/**/*.js"],
    languageOptions: { globals: globals.browser },
  },
);
