/**
 * Runs tsqctl through its own entry point (`main`) in the test's process: what a command prints and its
 * exit code, without a Node start-up (about 0.3 s of CPU each, and the suite runs hundreds). Tests of
 * what only a real process shows (an uncaught error, a signal, a terminal) spawn bin/tsqctl.js instead.
 */
import { main } from "../../src/cli/tsqctl.js";

export interface TsqctlRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * `env` is the command's whole environment (nothing of this process's leaks in). Like execa, the final
 * newline of each stream is dropped unless `stripFinalNewline` is false.
 */
export async function tsqctl(
  args: string[],
  env: NodeJS.ProcessEnv,
  { stripFinalNewline = true }: { stripFinalNewline?: boolean } = {},
): Promise<TsqctlRun> {
  let stdout = "";
  let stderr = "";
  const exitCode = await main(args, {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    env,
  });
  const strip = (text: string) => (stripFinalNewline ? text.replace(/\r?\n$/, "") : text);
  return { exitCode, stdout: strip(stdout), stderr: strip(stderr) };
}
