/**
 * An app's job module that brings its own plug-in. `tsq -r`, every `tsq-cluster -r` child and every
 * child of `new Cluster({ require })` import it, register its classes and run the list it exports as
 * `plugins`: children are separate processes, so this module, not a plug-in object, is what they share.
 *
 *   tsq-cluster -r dist/jobs.js --processes 2
 */
import { builtinPlugins } from "tsq";
import { auditTrail } from "./plugin.js";

/** Every plug-in its workers run, in chain order: the built-in features, then the audit trail. */
export const plugins = [...builtinPlugins(), auditTrail({ hold: ["ChargeCard"] })];

/** A job the trail records; it holds `audit:hold:<jid>` while it runs. */
export class ChargeCard {
  perform(orderId: string): string {
    return `charged ${orderId}`;
  }
}
