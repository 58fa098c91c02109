/**
 * The ```ts blocks of README.md and docs/*.md as files an app compiles (test/package/tarball.slow.test.ts):
 * each block is a module of its own (`export {}` appended, so top-level await and names stay local),
 * in a folder per Markdown file, compiled together in one tsc run against the installed package, with
 * test/package/apps/docs/prelude.ts declaring the app's own helpers the examples call (`db`, `mailer`, ...).
 *
 * Markers, an HTML comment on the nearest non-blank line above the fence (invisible when rendered):
 *   <!-- no-compile: reason -->   the block is not compiled (a reason is required)
 *   <!-- file: jobs.ts -->        the block is that file of its Markdown file's folder, so another block
 *                                 of the same Markdown file imports it (`import { HardJob } from "./jobs.js"`)
 *   <!-- example: <path> -->      the block is that file of the repository, word for word (a test file:
 *                                 test/testing/docs.test.ts; the plug-in example: its own test), compiled
 *                                 where it lives: skipped here
 * A block that shows a compile error quotes it in a comment, `// error TS2561: ...`: tsc must report
 * exactly the codes a block quotes (none for a block that quotes none).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface DocBlock {
  /** `docs/outcomes.md:12`: where the block's first code line is. */
  where: string;
  /** The module's path in the folder the blocks are written to: `docs-outcomes/block3.ts`, `README/jobs.ts`. */
  file: string;
  /** The error codes the block quotes (`// error TS2561: ...`), which tsc must report for it, sorted. */
  expected: string[];
  /** The module to compile; `lines[i]` of it came from `origin[i]` (a `file:line`, or "" for added lines). */
  text: string;
  origin: string[];
}

export interface Skipped {
  where: string;
  reason: string;
}

/** README.md and every docs/*.md under `root`, in a stable order. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** The compiled blocks and the skipped ones of the Markdown files `files` (paths relative to `root`). */
export function docBlocks(root: string, files: string[]): { blocks: DocBlock[]; skipped: Skipped[] } {
  const blocks: DocBlock[] = [];
  const skipped: Skipped[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    const folder = file.replace(/\.md$/, "").replace(/\//g, "-");
    for (let i = 0; i < lines.length; i++) {
      if (!/^```ts\s*$/.test(lines[i]!)) continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
      const code = lines.slice(start, end);
      const origin = code.map((_, k) => `${file}:${start + k + 1}`);
      // The marker: the nearest line above the fence that is not blank, when it is an HTML comment.
      let above = i - 1;
      while (above > 0 && lines[above]!.trim() === "") above--;
      const marker = /^<!--.*-->$/.test(lines[above]?.trim() ?? "") ? lines[above]!.trim() : "";
      const where = `${file}:${start + 1}`;
      i = end;
      const noCompile = /^<!-- no-compile: (.+?) -->$/.exec(marker);
      if (noCompile) {
        skipped.push({ where, reason: noCompile[1]! });
        continue;
      }
      if (marker.startsWith("<!-- no-compile")) throw new Error(`${where}: a no-compile marker needs a reason`);
      const example = /^<!-- example: (\S+) -->$/.exec(marker);
      if (example) {
        skipped.push({ where, reason: `the file ${example[1]}, compiled where it lives` });
        continue;
      }
      const named = /^<!-- file: ([\w./-]+\.ts) -->$/.exec(marker)?.[1];
      blocks.push({
        where,
        expected: [...new Set(code.flatMap((line) => /^\s*\/\/ error (TS\d+):/.exec(line)?.[1] ?? []))].sort(),
        file: `${folder}/${named ?? `block${blocks.length}.ts`}`,
        text: [...code, "export {};", ""].join("\n"),
        origin: [...origin, "", ""],
      });
    }
  }
  return { blocks, skipped };
}

/**
 * What is wrong with the blocks, by tsc's output (`--pretty false`, paths relative to the blocks'
 * folder): each error of a block that quotes none, as `file:line` of the Markdown line it came from
 * with tsc's message; for a block that quotes errors, a difference between its quoted codes and tsc's.
 */
export function blockErrors(output: string, blocks: DocBlock[]): string[] {
  const byName = new Map(blocks.map((block) => [block.file, block]));
  const problems: string[] = [];
  const reported = new Map<DocBlock, Set<string>>();
  for (const line of output.split("\n")) {
    const match = /^([\w./-]+\.ts)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(line);
    const block = match && byName.get(match[1]!);
    if (!match || !block) {
      if (line.includes("error TS")) problems.push(line);
      continue;
    }
    const codes = reported.get(block) ?? new Set();
    reported.set(block, codes.add(match[3]!));
    if (block.expected.length > 0) continue;
    const origin = block.origin[Number(match[2]) - 1] || `${match[1]}:${match[2]}`;
    problems.push(`${origin}: error ${match[3]}: ${match[4]}`);
  }
  for (const block of blocks.filter((b) => b.expected.length > 0)) {
    const actual = [...(reported.get(block) ?? [])].sort();
    if (actual.join() !== block.expected.join())
      problems.push(
        `${block.where}: the block quotes ${block.expected.join(", ")}; tsc reports ${actual.join(", ") || "none"}`,
      );
  }
  return [...new Set(problems)];
}
