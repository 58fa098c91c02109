#!/usr/bin/env node
// `tsq-cluster`: the multi-process supervisor. The code lives in dist/ (npm run build).
import { reportCrash } from "./crash.js";

import("../dist/src/cli/tsqCluster.js")
  .then((cli) => cli.main(process.argv.slice(2)))
  .catch(async (error) => {
    await reportCrash("tsq-cluster", error);
    process.exit(1);
  });
