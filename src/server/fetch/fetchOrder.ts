/**
 * The fetch hook: the order in which a capsule takes jobs, for a feature that orders fetching (fair
 * groups, priorities) as a plug-in. Each fetch starts from Sidekiq's order (queueOrder.ts: strict,
 * random or weighted) minus the paused queues; every plug-in's `FetchOrder` for the capsule then gets the
 * list the one before it returned, and the last one's is the fetch's (BRPOP/BLMPOP's key order, or
 * reliable-fetch.lua's).
 *
 * The hooks run in plug-in list order, except where a plug-in asks to run `before` or `after` another
 * (named by its plug-in name; a name not in the worker's list is ignored). The order is settled once, as
 * the worker is built; a cycle is refused there. With no plug-in declaring a fetch order, the fetchers get
 * none and a fetch costs what it did without the seam.
 */
import type { CapsuleConfig } from "../../platform/config/options.js";
import type { ServerContext } from "../context.js";
import type { CapsuleFetchOrder, FetchOrder } from "../hooks.js";

export type { FetchOrder } from "../hooks.js";

export interface PluginFetch {
  /** Plug-ins whose fetch order must see this one's result. */
  readonly before?: readonly string[];
  /** Plug-ins whose result this one's must see. */
  readonly after?: readonly string[];
  /** This worker's order for one capsule; undefined when the capsule is not its concern (costs nothing). */
  order(ctx: ServerContext, capsule: CapsuleConfig): FetchOrder | undefined;
}

interface Declaring {
  readonly name: string;
  readonly fetch?: PluginFetch;
}

/**
 * The plug-ins' fetch orders settled into one, or undefined when none declares one. Throws when their
 * `before`/`after` form a cycle, naming the plug-ins in it.
 */
export function fetchOrderOf(plugins: readonly Declaring[]): ((ctx: ServerContext) => CapsuleFetchOrder) | undefined {
  const declaring = plugins.filter((plugin) => plugin.fetch !== undefined);
  if (declaring.length === 0) return undefined;
  const fetches = settle(declaring).map((plugin) => plugin.fetch!);
  return (ctx) => (capsule) => {
    const steps = fetches.flatMap((fetch) => fetch.order(ctx, capsule) ?? []);
    if (steps.length <= 1) return steps[0];
    return (queues) => steps.reduce((order, step) => step(order), queues);
  };
}

/**
 * List order, but a plug-in that must follow others comes right after the last of them: each is placed
 * in list order, the ones it must follow (its `after`, and those naming it in `before`) placed first.
 */
function settle(declaring: readonly Declaring[]): Declaring[] {
  const index = new Map(declaring.map((plugin, i) => [plugin.name, i]));
  const follows = declaring.map(() => new Set<number>()); // follows[i]: the plug-ins i must come after
  declaring.forEach((plugin, i) => {
    for (const name of plugin.fetch!.after ?? []) {
      const j = index.get(name);
      if (j !== undefined && j !== i) follows[i]!.add(j);
    }
    for (const name of plugin.fetch!.before ?? []) {
      const j = index.get(name);
      if (j !== undefined && j !== i) follows[j]!.add(i);
    }
  });
  const placed: Declaring[] = [];
  const state = declaring.map((): "new" | "placing" | "placed" => "new");
  const place = (i: number, path: string[]): void => {
    if (state[i] === "placed") return;
    const name = declaring[i]!.name;
    if (state[i] === "placing")
      throw new Error(
        `the fetch orders of ${[...path.slice(path.indexOf(name)), name].join(" → ")} must each come after the next: drop one before/after`,
      );
    state[i] = "placing";
    for (const j of follows[i]!) place(j, [...path, name]);
    state[i] = "placed";
    placed.push(declaring[i]!);
  };
  declaring.forEach((_, i) => place(i, []));
  return placed;
}
