// Copies the Lua scripts (kept beside the code that calls them) and the dashboard's static files into
// dist/ so it is self-contained (no build step at install).
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, relative } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function copyLua(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyLua(path);
    else if (entry.name.endsWith(".lua")) {
      const target = join(root, "dist", relative(root, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}

copyLua(join(root, "src"));
copyLua(join(root, "examples")); // a plug-in example keeps its Lua beside it too
const assets = "src/admin/web/assets";
mkdirSync(join(root, "dist", assets), { recursive: true });
cpSync(join(root, assets), join(root, "dist", assets), { recursive: true });
