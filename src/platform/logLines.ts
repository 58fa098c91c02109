/**
 * LineBatch: the destination of tsq's JSON lines on stdout. The lines logged in one turn of the event
 * loop go to stdout as one synchronous write at the end of the turn, instead of one write each.
 *
 * pino's default stdout stream (sonic-boom, asynchronous) measures the text it already holds on every
 * line it takes (Buffer.byteLength of a string growing to 16 KB while a write is on its way): with a
 * start and a done line per job, that scan and the flattened copies it leaves for the collector were
 * most of what the two lines cost (docs/performance.md, "Per-job cost and memory"). A batch is measured once.
 *
 * The batch goes through `redactText` (secrets.ts) as a whole, instead of each line through the
 * logger's hook.
 *
 * Synchronous, as the pretty stream is: nothing is in flight when the process exits, so the lines of
 * its last turn are written at exit (a crash included) in their order, where an asynchronous write
 * still on its way is lost. A reader that does not keep up holds the worker at its next batch, as
 * process.stdout on a pipe does, instead of letting the lines pile up in memory.
 *
 * FdLines writes the batches. Node makes stdout non-blocking once anything touches process.stdout, so
 * a write to a pipe whose reader lags (a container's log driver, a `| tee`) fails with EAGAIN when the
 * pipe's 64 KB are full. pino's own synchronous stream then sleeps 100 ms before it tries again, which
 * stopped a draining worker for 100 ms at a time (about 6 such sleeps in a 100,000-job drain read by a
 * pipe); FdLines waits 1 ms, so the worker goes on as soon as the reader has made room.
 */
import { writeSync } from "node:fs";
import type { DestinationStream } from "pino";
import { redactText } from "./secrets.js";

/** How long a write waits for a full pipe to drain before it tries again: ms. */
const FULL_PIPE_WAIT_MS = 1;

/** Lines to a file descriptor, each write whole and in order (see the header). */
export class FdLines implements DestinationStream {
  // Atomics.wait needs a shared cell to wait on; nothing ever notifies it, so a wait runs its time out.
  private readonly pause = new Int32Array(new SharedArrayBuffer(4));

  constructor(private readonly fd: number) {}

  write(text: string): void {
    // Most writes go whole on the first try: the string is written without a Buffer of its own (60 →
    // 45 ns a line). A partial write or a full pipe continues from the bytes.
    const size = Buffer.byteLength(text);
    const first = this.attempt(text, 0);
    if (first === undefined || first === size) return;
    const bytes = Buffer.from(text);
    for (let written = first; written < size;) {
      const more = this.attempt(bytes, written);
      if (more === undefined) return;
      written += more;
    }
  }

  /** Bytes written (0 after a wait for a full pipe), or undefined when nobody reads any more. */
  private attempt(data: string | Buffer, offset: number): number | undefined {
    try {
      return typeof data === "string" ? writeSync(this.fd, data) : writeSync(this.fd, data, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(this.pause, 0, 0, FULL_PIPE_WAIT_MS);
        return 0;
      }
      // Nobody reads any more (the reader exited, stdout was closed): the lines have nowhere to go,
      // and a worker must not stop working for its log.
      if (code === "EPIPE" || code === "EBADF") return undefined;
      throw error;
    }
  }
}

export class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private scheduled = false;

  /** @param destination a synchronous stream (FdLines) */
  constructor(private readonly destination: DestinationStream) {
    process.on("exit", this.flush);
  }

  write(line: string): void {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.lines;
    if (lines.length === 0) return;
    this.lines = [];
    // Redacted here, once per batch, rather than per line by the logger's hook: no secret or URL
    // credential spans a line (none holds a line break), so the lines come out as they would one by one.
    this.destination.write(redactText(lines.length === 1 ? lines[0]! : lines.join("")));
  };
}
