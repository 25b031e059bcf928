// ESLint (flat config) for the components' JavaScript and its Node tests: `npx eslint .`.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "logs/", "test-artifacts/", ".venv/"] },
  js.configs.recommended,
  {
    files: ["ui/components/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" }],
      eqeqeq: "error",
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
];
