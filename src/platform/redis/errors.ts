/**
 * What a Redis error means for the operator. Redis answers a refused write with a terse code (`OOM
 * command not allowed when used memory > 'maxmemory'`), and inside MULTI only with `EXECABORT
 * Transaction discarded because of previous errors`, the real reason being in ioredis's
 * `previousErrors`. `explainRedisError` digs the reason out and says what it means and what to do;
 * `condition` names it, so a caller can log a condition once rather than at every beat.
 */

export interface RedisProblem {
  /** Stable name of the condition: "oom", "readonly", "auth", ... or "other". */
  condition: string;
  /** What happened and what to do, for a log line or an error message. */
  advice: string;
  /** The Redis error text itself. */
  reply: string;
}

const KNOWN: { test: RegExp; condition: string; advice: string }[] = [
  {
    test: /^OOM\b/,
    condition: "oom",
    advice:
      "Redis is out of memory (maxmemory reached and its policy evicts nothing); free memory in Redis " +
      "(drain or clear queues, trim the dead set) or raise maxmemory",
  },
  {
    test: /^(READONLY|NOREPLICAS)\b/,
    condition: "readonly",
    advice: "this Redis is a read-only replica; point tsq at the primary (or use Sentinel so it follows failovers)",
  },
  {
    test: /^(NOAUTH|WRONGPASS|ERR invalid password|ERR AUTH)/,
    condition: "auth",
    advice: "Redis refused the credentials; check the password (and user) in the Redis URL",
  },
  {
    test: /^NOPERM\b/,
    condition: "permission",
    advice: "the Redis user lacks a permission tsq needs; grant it the commands and keys (ACL) tsq uses",
  },
  {
    test: /^MISCONF\b/,
    condition: "misconf",
    advice: "Redis refuses writes because it cannot save its snapshot to disk; fix its disk or its `save` settings",
  },
  { test: /^LOADING\b/, condition: "loading", advice: "Redis is loading its data set; tsq retries until it is done" },
  {
    test: /^BUSY\b/,
    condition: "busy",
    advice: "Redis is busy running a long script; it answers again when the script ends (or SCRIPT KILL)",
  },
  {
    test: /^MASTERDOWN\b/,
    condition: "masterdown",
    advice: "this replica lost its link to the primary; point tsq at the primary",
  },
];

function replyOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The underlying error of an EXECABORT (the first queued command Redis refused), else the error itself. */
function rootCause(error: unknown): unknown {
  const previous = (error as { previousErrors?: unknown[] } | null)?.previousErrors;
  if (/^EXECABORT\b/.test(replyOf(error)) && Array.isArray(previous) && previous.length > 0) return previous[0];
  return error;
}

export function explainRedisError(error: unknown): RedisProblem {
  const cause = rootCause(error);
  const reply = replyOf(cause);
  for (const known of KNOWN) {
    if (known.test.test(reply)) return { condition: known.condition, advice: known.advice, reply };
  }
  return { condition: "other", advice: reply, reply };
}

/**
 * Logs Redis trouble of one activity (the heartbeat, a fetch loop) once per condition: again only when
 * the condition changes, and once more when it clears.
 */
export class ProblemLog {
  private current: string | undefined;

  constructor(
    private readonly what: string,
    private readonly log: { error(fields: object, message: string): void; info(message: string): void },
  ) {}

  /** Reports `error` unless its condition was already reported. */
  failed(error: unknown, consequence: string): void {
    const problem = explainRedisError(error);
    const key = problem.condition === "other" ? `other:${problem.reply}` : problem.condition;
    if (key === this.current) return;
    this.current = key;
    this.log.error(
      { err: error, condition: problem.condition, redis_reply: problem.reply },
      `${this.what} failed: ${problem.advice}; ${consequence}`,
    );
  }

  /** The activity works again. */
  succeeded(): void {
    if (this.current === undefined) return;
    this.current = undefined;
    this.log.info(`${this.what} works again`);
  }
}
