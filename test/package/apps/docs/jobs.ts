// The `jobs.ts` a snippet of README.md or docs/*.md imports (`./jobs.js`) when its own Markdown file
// does not show one: the job class of README's tour (test/package/docBlocks.ts).
import { Job } from "tsq";

export class HardJob extends Job {
  static options = { queue: "critical", retry: 5 };
  async perform(name: string, count: number) {
    console.log(name, count);
  }
}
