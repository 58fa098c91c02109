#!/usr/bin/env node
// tsqctl: the admin command. The code lives in dist/ (run `npm run build` first).
import("../dist/src/cli/tsqctl.js").then(
  async (m) => {
    process.exitCode = await m.main(process.argv.slice(2));
  },
  (error) => {
    process.stderr.write(`tsqctl: cannot load dist/src/cli/tsqctl.js (run \`npm run build\`): ${error.message}\n`);
    process.exitCode = 1;
  },
);
