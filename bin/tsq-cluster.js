#!/usr/bin/env node
// `tsq-cluster`: the multi-process supervisor. The code lives in dist/ (npm run build).
import("../dist/src/cli/tsqCluster.js")
  .then((cli) => cli.main(process.argv.slice(2)))
  .catch((error) => {
    console.error(error?.code === "ERR_MODULE_NOT_FOUND" ? `tsq-cluster: not built yet; run \`npm run build\` (${error.message})` : error);
    process.exit(1);
  });
