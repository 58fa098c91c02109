#!/usr/bin/env node
// `tsq`: one worker process. The code lives in dist/ (npm run build).
import("../dist/src/cli/tsq.js")
  .then((cli) => cli.main(process.argv.slice(2)))
  .catch((error) => {
    console.error(error?.code === "ERR_MODULE_NOT_FOUND" ? `tsq: not built yet; run \`npm run build\` (${error.message})` : error);
    process.exit(1);
  });
