/**
 * The batch file: a cluster child writes the jobs of each fetched batch into it before they start, and
 * the supervisor reads it only when the child hangs, to name the job that blocked its event loop.
 *
 * Why a file and not an IPC message: a positional write into a private file is one cheap system call
 * that wakes nobody, while a message per batch cost the child a pipe write and the supervisor a wake-up
 * and a JSON parse, about 2 µs of CPU per job at 50 jobs per batch, on the same cores as the jobs.
 *
 * Each write starts at offset 0 and ends with a NUL, so a shorter batch after a longer one leaves a
 * stale tail that the reader ignores. A torn read is impossible where it matters: a hung child is not
 * writing.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Logger } from "../platform/logger.js";

/** A private directory (mode 0700) for one supervisor's batch files. */
export function makeBatchDir(): string {
  return mkdtempSync(join(tmpdir(), "tsq-cluster-"));
}

export function removeBatchFiles(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

export class BatchWriter {
  private readonly fd: number;

  /** Throws if the file cannot be created (the child then reports batches over IPC). */
  constructor(private readonly path: string) {
    this.fd = openSync(path, "w", 0o600);
  }

  write(batch: string): void {
    writeSync(this.fd, `${batch}\0`, 0, "utf8");
  }

  /**
   * At the child's exit: removes the file, and the directory if this was the last child in it. The
   * supervisor removes both too; this covers a supervisor killed with SIGKILL, whose children stop alone.
   */
  dispose(): void {
    for (const step of [() => closeSync(this.fd), () => unlinkSync(this.path), () => rmdirSync(dirname(this.path))]) {
      try {
        step();
      } catch {
        // already gone, or other children's files are still in the directory
      }
    }
  }
}

/** The last batch written, or "" if there is none (or the file is gone). */
export function readBatchFile(path: string): string {
  try {
    const text = readFileSync(path, "utf8");
    const end = text.indexOf("\0");
    return end < 0 ? text : text.slice(0, end);
  } catch {
    return "";
  }
}

/**
 * The child's batch report: into the batch file, or through `fallback` (an IPC message) when there is
 * no file or it cannot be created or written. The file is removed when the process exits.
 */
export function batchReporter(
  path: string | undefined,
  log: Pick<Logger, "warn">,
  fallback: (batch: string) => void,
): (batch: string) => void {
  if (!path) return fallback;
  let writer: BatchWriter;
  try {
    writer = new BatchWriter(path);
    process.once("exit", () => writer.dispose());
  } catch (error) {
    log.warn({ err: error, path }, "cannot create the batch file; reporting batches over IPC");
    return fallback;
  }
  let report = (batch: string): void => {
    try {
      writer.write(batch);
    } catch (error) {
      log.warn({ err: error, path }, "cannot write the batch file; reporting batches over IPC from now on");
      report = fallback;
      fallback(batch);
    }
  };
  return (batch) => report(batch);
}
