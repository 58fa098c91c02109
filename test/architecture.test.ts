/**
 * The import rules of .dependency-cruiser.cjs (docs/internals.md, "Folders"): the real tree breaks
 * none of them, and each rule catches a deliberately bad import in a throwaway tree that has the same
 * folders. Runs dependency-cruiser's own command line, as `npm run lint:deps` does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: dist/test/architecture.test.js is two folders below it. */
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const config = join(root, ".dependency-cruiser.cjs");
const cli = join(root, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

/** Cruises `paths` under `cwd` with the repository's rules; the violations dependency-cruiser reports. */
function cruise(cwd: string, paths: string[]): Promise<{ violations: Violation[]; modules: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, ...paths, "--config", config, "--output-type", "json"],
      { cwd, maxBuffer: 256 * 1024 * 1024 },
      // Exit code 0 or the number of errors: the JSON on stdout says which.
      (error, stdout, stderr) => {
        try {
          const result = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
          resolve({ violations: result.summary.violations, modules: result.summary.totalCruised });
        } catch {
          reject(new Error(`dependency-cruiser gave no JSON (${error?.message ?? "no error"}): ${stderr}`));
        }
      },
    );
  });
}

function describe(violations: Violation[]): string {
  return violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).join("\n");
}

test("src and test break none of the import rules, and the rules see the whole tree", async () => {
  const { violations, modules } = await cruise(root, ["src", "test"]);
  assert.deepEqual(describe(violations), "");
  // A config that silently matched nothing would also report 0 violations.
  assert.ok(modules > 300, `only ${modules} modules cruised`);
});

test("each rule fails on a deliberately bad import", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tsq-arch-"));
  try {
    const files: Record<string, string> = {
      "src/wire/keys.ts": `import "../platform/logger.js";\nexport const k = 1;\n`,
      "src/platform/logger.ts": `import { a } from "../client/Client.js";\nexport const logger = a;\n`,
      "src/client/Client.ts": `import { b } from "../wire/keys/flow.js";\nexport const a = b;\n`,
      "src/wire/keys/flow.ts": `export const b = 1;\n`,
      "src/server/Processor.ts": `import { f } from "../features/cron/plugin.js";\nexport const p = f;\n`,
      "src/features/cron/plugin.ts": `import { w } from "../../admin/web/index.js";\nexport const f = w;\n`,
      "src/admin/web/index.ts": `export const w = 1;\n`,
      "src/cluster/Supervisor.ts": `import { list } from "../plugins.js";\nexport const s = list;\n`,
      "src/plugins.ts": `export const list = [];\n`,
      "src/cli/tsq.ts": `import { list } from "../plugins.js";\nexport const t = list;\n`,
      "src/server/a.ts": `import type { B } from "./b.js";\nexport type A = { b?: B };\n`,
      "src/server/b.ts": `import type { A } from "./a.js";\nexport type B = { a?: A };\n`,
      "src/client/missing.ts": `import "./nowhere.js";\n`,
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
        include: ["src/**/*.ts"],
      }),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const { violations } = await cruise(dir, ["src"]);
    const found = new Set(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`));
    const expected = [
      "wire-imports-nothing: src/wire/keys.ts → src/platform/logger.ts",
      "platform-imports-wire-and-platform: src/platform/logger.ts → src/client/Client.ts",
      "keys-from-one-module: src/client/Client.ts → src/wire/keys/flow.ts",
      "core-never-imports-features: src/server/Processor.ts → src/features/cron/plugin.ts",
      "job-path-never-imports-admin: src/features/cron/plugin.ts → src/admin/web/index.ts",
      "plugins-list-only-from-entry-points: src/cluster/Supervisor.ts → src/plugins.ts",
      "no-cycles: src/server/a.ts → src/server/b.ts",
      "not-to-unresolvable: src/client/missing.ts → ./nowhere.js",
    ];
    for (const line of expected) assert.ok(found.has(line), `not caught: ${line}\nreported:\n${[...found].join("\n")}`);
    // The entry point may import the list: only the bad edges above are reported.
    assert.equal(found.size, expected.length, [...found].join("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
