/**
 * Node flags for cluster children: the supervisor's own, plus a smaller V8 young generation unless the
 * operator chose one (in NODE_OPTIONS or on the supervisor's command line).
 *
 * Why: a worker allocates short-lived garbage for every job. Node's default lets each of the two
 * semi-spaces grow to 16 MB, so at tens of thousands of jobs per second a child streams through 32 MB
 * that no CPU cache holds, and its RSS keeps creeping up for the first seconds of load. With 8 MB a
 * child used about a quarter less CPU per no-op job and its RSS stayed flat at about 100 MB instead of
 * rising to 125–140 MB (npm run bench, 1,000,000 jobs; docs/performance.md). Jobs that keep much data
 * alive across an await get it promoted to the old generation sooner; raise it if GC shows up in a
 * profile of such jobs.
 */
export const CHILD_SEMI_SPACE_MB = 8;

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size\b/;

export function childExecArgv(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const chosen = [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => SEMI_SPACE_FLAG.test(flag));
  return chosen ? [...execArgv] : [...execArgv, `--max-semi-space-size=${CHILD_SEMI_SPACE_MB}`];
}
