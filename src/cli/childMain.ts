/** Entry point of a `tsq-cluster` child process (node:cluster `exec`): a worker with the job module's plug-ins. */
import { runChild } from "../cluster/child.js";
import { loadJobModule } from "./tsq.js";

void runChild(loadJobModule);
