// Copies the Lua scripts beside the compiled code so dist/ is self-contained.
import { cpSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
mkdirSync(join(root, "dist/src/lua"), { recursive: true });
cpSync(join(root, "src/lua"), join(root, "dist/src/lua"), { recursive: true });
