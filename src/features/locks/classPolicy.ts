/**
 * A lock API's per-class policy (deduplication, unique jobs), read once per class from its static
 * fields and remembered: the read runs at a class's first push or first job, and a bad declaration
 * throws a ConfigError naming the class, the problem and the guide to read.
 */
import { ConfigError } from "../../wire/errors.js";

/** Builds the "job class X: <what> (see <guide>); fix the class's <fields>" error of a bad declaration. */
export type BadDeclaration = (what: string) => ConfigError;

interface NamedClass {
  name?: string;
  jobName?: string;
}

/**
 * Returns `policyOf(klass)`: `read`'s answer for the class, memoized; undefined for no class or when
 * `read` says null (the class does not use this API).
 */
export function classPolicy<C extends NamedClass, P>(
  guide: string,
  fields: string,
  read: (klass: C, bad: BadDeclaration) => P | null,
): (klass: object | undefined) => P | undefined {
  const cache = new WeakMap<object, P | null>();
  return (klass) => {
    if (klass === undefined) return undefined;
    let policy = cache.get(klass);
    if (policy === undefined) {
      const named = klass as C;
      const name = named.jobName ?? named.name ?? "(anonymous class)";
      policy = read(
        named,
        (what) => new ConfigError(`job class ${name}: ${what} (see ${guide}); fix the class's ${fields}`),
      );
      cache.set(klass, policy);
    }
    return policy ?? undefined;
  };
}
