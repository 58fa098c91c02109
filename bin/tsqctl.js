#!/usr/bin/env node
// tsqctl: the admin command. The code lives in dist/ (run `npm run build` first).
import { reportCrash } from "./crash.js";

import("../dist/src/cli/tsqctl.js")
  .then(async (m) => {
    process.exitCode = await m.main(process.argv.slice(2));
  })
  .catch(async (error) => {
    await reportCrash("tsqctl", error);
    process.exitCode = 1;
  });

// An admin command has no reason to outlive an unexpected error; print it safely and fail.
process.on("unhandledRejection", async (error) => {
  await reportCrash("tsqctl", error);
  process.exit(1);
});
