/** Small shared test fixtures: temp working directories with a config file, and bulk pushes. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { Client } from "../../src/client/Client.js";

/** Returns a `workdir(config?)` factory: fresh directories with `config/tsq.yml`, removed after the file. */
export function workdirs(prefix: string): (config?: string) => string {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  after(() => rmSync(root, { recursive: true, force: true }));
  let dirs = 0;
  return (config?: string) => {
    const cwd = join(root, `app-${++dirs}`);
    mkdirSync(join(cwd, "config"), { recursive: true });
    if (config !== undefined) writeFileSync(join(cwd, "config/tsq.yml"), config);
    return cwd;
  };
}

const scratch = new Set<string>();
process.once("exit", () => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed when the test file's process exits. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  scratch.add(dir);
  return dir;
}

/** Pushes one job per argument list through a short-lived client; resolves to the jids. */
export async function pushJobs(
  url: string,
  className: string,
  argsList: unknown[][],
  queue = "default",
): Promise<string[]> {
  const client = new Client({ redis: url });
  try {
    return (await client.pushBulk({ class: className, args: argsList, queue })) as string[];
  } finally {
    await client.close();
  }
}
