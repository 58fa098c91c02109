// `npm run lint:paths`: every path of the repository named in a comment, a Lua header or a doc exists.
// A file that moves leaves behind comments and docs pointing at its old place; this finds them.
// Checked: `src/`, `test/` and `scripts/` paths with an extension, or ending in `/` (a folder), in
// src/, test/, scripts/, docs/, README.md and the config files. CHANGELOG.md is history and keeps the
// names things had.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// `--root <dir>` checks another tree (the checker's own test); the repository's by default.
const rootAt = process.argv.indexOf("--root");
const root = rootAt === -1 ? join(fileURLToPath(import.meta.url), "../..") : process.argv[rootAt + 1];
const roots = ["src", "test", "scripts", "docs", "README.md", ".ci", "deploy", "examples", "config"];
const SKIP_DIRS = new Set(["node_modules", "dist", "fixtures", "msgpackr-extract-none", "apps"]);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|lua|md|rb|yml|yaml|json)$|^run$/;
// A repository path: starts at a top folder (not after another path segment or a dist/ prefix), then
// segments; it ends with an extension or a slash. Globs and template placeholders are not paths.
const PATH =
  /(?<![\w./@-])((?:src|test|scripts)\/[\w.-]+(?:\/[\w.-]+)*(?:\.(?:ts|lua|mjs|js|cjs|json|rb|md)|\/))(?![\w*{<$])/g;

function walk(path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isDirectory()) {
    return readdirSync(full).flatMap((name) => (SKIP_DIRS.has(name) ? [] : walk(join(path, name))));
  }
  return TEXT.test(path.split("/").pop()) ? [path] : [];
}

/** A path as written may name the compiled file (`.js` for a `.ts` source) or a test's compiled name. */
function exists(path) {
  if (existsSync(join(root, path))) return true;
  if (/\.js$/.test(path) && existsSync(join(root, path.replace(/\.js$/, ".ts")))) return true;
  return false;
}

/**
 * The prose of a file, line by line: comments of code (line and block comments, Lua's `--`), Markdown outside
 * code fences. Code itself names paths of apps and fixtures (a test app's own `worker.js`), which are
 * not the repository's (the test apps under test/package/apps/).
 */
function prose(file, text) {
  const lines = text.split("\n");
  if (file.endsWith(".md")) {
    let fenced = false;
    return lines.map((line) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      return fenced ? "" : line;
    });
  }
  if (file.endsWith(".lua") || file.endsWith(".rb") || /\.(ya?ml)$/.test(file) || file.endsWith("run")) {
    const mark = file.endsWith(".lua") ? "--" : "#";
    return lines.map((line) => (line.includes(mark) ? line.slice(line.indexOf(mark)) : ""));
  }
  if (file.endsWith(".json")) return [];
  let block = false;
  return lines.map((line) => {
    if (block) {
      if (line.includes("*/")) block = false;
      return line;
    }
    const start = line.indexOf("/*");
    if (start !== -1 && !line.includes("*/", start)) {
      block = true;
      return line.slice(start);
    }
    if (start !== -1) return line.slice(start);
    const comment = line.search(/(^|\s)\/\/ /);
    return comment === -1 ? "" : line.slice(comment);
  });
}

const missing = [];
for (const file of roots.flatMap(walk)) {
  prose(file, readFileSync(join(root, file), "utf8")).forEach((line, i) => {
    for (const match of line.matchAll(PATH)) {
      if (!exists(match[1])) missing.push(`${file}:${i + 1}: ${match[1]}`);
    }
  });
}
if (missing.length > 0) {
  console.error(`${missing.length} reference(s) to a path that does not exist (moved or renamed?):`);
  for (const line of missing) console.error(`  ${line}`);
  process.exit(1);
}
console.log("paths: every src/, test/ and scripts/ path named in a comment or a doc exists");
