/**
 * Reliable push as a plug-in (docs/flow-control.md#reliable-push): a Client's writes take a path that
 * holds them in memory, bounded and in order, while Redis is unreachable, and writes them when it is
 * back. On with the Client option `reliablePush` or TSQ_RELIABLE_PUSH; off, it adds nothing to a push.
 */
import { definePlugin } from "../../../server/plugin.js";
import { PushBuffer } from "./PushBuffer.js";
import { resolveReliablePush, type ReliablePushOptions } from "./settings.js";

declare module "../../../client/ClientOptions.js" {
  interface ClientOptions {
    /**
     * Hold pushes in memory (bounded, in order) while Redis is unreachable and write them when it is back
     * (docs/flow-control.md#reliable-push). Default: TSQ_RELIABLE_PUSH, else off.
     */
    reliablePush?: ReliablePushOptions | boolean;
  }
}

export const reliablePush = definePlugin({
  name: "reliable-push",
  clientSettings: ["reliablePush"],
  client({ settings }) {
    const resolved = resolveReliablePush(settings.reliablePush as ReliablePushOptions | boolean | undefined);
    if (resolved === undefined) return undefined;
    return {
      writePath: (redis, write, landingLists) => new PushBuffer(redis, write, resolved, landingLists),
    };
  },
});
