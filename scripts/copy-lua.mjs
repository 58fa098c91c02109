// Copies the Lua scripts and the dashboard's static files beside the compiled code so dist/ is
// self-contained (no build step at install).
import { cpSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const dir of ["src/lua", "src/web/assets"]) {
  mkdirSync(join(root, "dist", dir), { recursive: true });
  cpSync(join(root, dir), join(root, "dist", dir), { recursive: true });
}
