#!/usr/bin/env node
// `tsq`: one worker process. The code lives in dist/ (npm run build).
import { reportCrash } from "./crash.js";

import("../dist/src/cli/tsq.js")
  .then((cli) => cli.main(process.argv.slice(2)))
  .catch(async (error) => {
    await reportCrash("tsq", error);
    process.exit(1);
  });
