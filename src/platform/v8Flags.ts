/**
 * V8 settings of the processes that run jobs (a `tsq` worker, a tsq-cluster child), each for a reason
 * measured on a 200,000 no-op job drain (docs/performance.md, "Per-job cost and memory"):
 *
 * - `--max-semi-space-size=4` (MB): the young generation grows to 3 × 16 MB by default under a job
 *   system's steady allocation, and the process keeps those pages: capped at 4 MB semi-spaces, a drain's
 *   RSS peak fell by about 35 MB, with no more worker CPU per job (a scavenge's cost follows what
 *   survives it, about one batch of jobs, not the space's size). At 1 MB (what V8 starts with) the peak
 *   fell further but each job cost about 3 µs more: scavenges every few hundred jobs copy the jobs in
 *   flight each time.
 * - `--no-allocation-site-pretenuring`: V8 learns that the objects of a job's path survive a scavenge
 *   (they live as long as the job, longer than a scavenge's interval) and allocates them in the old
 *   generation directly, which then grows until a full collection: about 16 MB of a drain's RSS peak.
 *
 * A child gets both on its command line. A `tsq` worker is started by its user, so it can only set what
 * V8 reads while it runs. Pretenuring is one. The semi-space cap is read when the heap is made, but the
 * growth factor (`--semi-space-growth-factor`, 2 by default) is read at each growth: the worker watches
 * its garbage collections and sets the factor to 1 once a semi-space reaches 4 MB (2 again if V8 shrank
 * it below), which holds the young generation where the flag would (a drain's RSS peak 117 → 92 MB,
 * docs/performance.md). A flag the user gave (command line or NODE_OPTIONS) is never overridden.
 */
import { PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

const SEMI_SPACE_MB = 4;
const SEMI_SPACE = `--max-semi-space-size=${SEMI_SPACE_MB}`;
const GROWTH = "--semi-space-growth-factor";
const NO_PRETENURING = "--no-allocation-site-pretenuring";

/** True when the user set this V8 option already, on node's command line or in NODE_OPTIONS. */
function userSet(flag: string, execArgv: readonly string[], nodeOptions: string): boolean {
  const name = flag.replace(/^--(no-)?/, "").split("=")[0]!;
  const mentions = (arg: string) => arg.replace(/_/g, "-").includes(name);
  return execArgv.some(mentions) || nodeOptions.split(/\s+/).some(mentions);
}

/** A tsq-cluster child's node options: the parent's, plus the job-path settings the user did not set. */
export function childExecArgv(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? "",
): string[] {
  const added = [SEMI_SPACE, NO_PRETENURING].filter((flag) => !userSet(flag, execArgv, nodeOptions));
  return [...execArgv, ...added];
}

/** In a `tsq` worker, before its job path runs: what V8 reads at run time (pretenuring). */
export function applyWorkerV8Flags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? "",
): void {
  if (!userSet(NO_PRETENURING, execArgv, nodeOptions)) v8.setFlagsFromString(NO_PRETENURING);
  if (!userSet(SEMI_SPACE, execArgv, nodeOptions) && !userSet(GROWTH, execArgv, nodeOptions))
    capYoungGeneration(SEMI_SPACE_MB);
}

/**
 * Holds each semi-space at `semiSpaceMb` from inside a running process: after every collection, the
 * growth factor is 1 while the young generation is at the cap and 2 (V8's default) below it. A
 * collection happens every few MB of allocation (thousands of jobs), so the check costs nothing per job.
 * The observer does not keep the process alive. Returns a function that stops the watch.
 */
export function capYoungGeneration(semiSpaceMb: number): () => void {
  const capBytes = semiSpaceMb * 1024 * 1024;
  let atCap = false;
  const observer = new PerformanceObserver(() => {
    const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
    // new_space holds both semi-spaces, so one is half its size.
    const reached = newSpace !== undefined && newSpace.space_size / 2 >= capBytes;
    if (reached === atCap) return;
    atCap = reached;
    v8.setFlagsFromString(`${GROWTH}=${reached ? 1 : 2}`);
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}
