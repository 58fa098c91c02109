/** Entry point of a `tsq-cluster` child process (node:cluster `exec`). */
import { runChild } from "./child.js";

void runChild();
