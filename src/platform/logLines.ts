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
 */
import type { DestinationStream } from "pino";
import { redactText } from "./secrets.js";

export class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private scheduled = false;

  /** @param destination a synchronous stream (sonic-boom with `sync: true`) */
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
