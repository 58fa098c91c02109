/**
 * Who owns this process's node:cluster primary. `cluster.setupPrimary` (the child entry point) and the
 * `exit` / `message` events are process-wide, so two supervisors in one process would fork each other's
 * children and see each other's exits. One supervisor at a time claims it; a second is refused.
 *
 * The claim is recorded on the node:cluster module object itself, under a registered symbol, rather
 * than in a variable of this module: the resource is the process's, and two copies of tsq loaded in
 * one process (two versions in node_modules) must see each other's claim.
 */
import cluster from "node:cluster";
import { TsqError } from "../wire/errors.js";

const OWNER = Symbol.for("tsq.cluster.primary");

type Claimable = typeof cluster & { [OWNER]?: object };

/** Why this process cannot supervise children now; undefined when it can. */
export function primaryUnavailable(): string | undefined {
  if (!cluster.isPrimary)
    return "this process is itself a node:cluster worker; only a primary process can fork children";
  if ((cluster as Claimable)[OWNER] !== undefined)
    return (
      "another cluster is already running in this process: node:cluster's primary is per process " +
      "(cluster.setupPrimary is global), so only one cluster may run at a time; stop it first or use another process"
    );
  return undefined;
}

/** Claims the primary for `owner`; throws with the reason when it is taken. */
export function claimPrimary(owner: object): void {
  const problem = primaryUnavailable();
  if (problem !== undefined) throw new TsqError(problem);
  (cluster as Claimable)[OWNER] = owner;
}

/** Gives the primary back; a no-op unless `owner` holds it. */
export function releasePrimary(owner: object): void {
  if ((cluster as Claimable)[OWNER] === owner) delete (cluster as Claimable)[OWNER];
}
