/**
 * A plug-in's status view is a tsqctl command: its state as JSON with --json, its text otherwise, read
 * from a real Redis; a view named like one of tsqctl's commands is refused by name.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Command } from "commander";
import { registerPluginViews } from "../../../src/admin/tsqctl/pluginViews.js";
import { buildProgram } from "../../../src/cli/tsqctl.js";
import type { CliIO } from "../../../src/admin/tsqctl/common.js";
import { defineView, definePlugin } from "../../../src/server/plugin.js";
import { useRedis } from "../../helpers/redis.js";

const handle = useRedis();

const holds = definePlugin({
  name: "holds",
  views: [
    defineView({
      name: "holds",
      description: "list the jobs holding a hold",
      read: async (redis) => (await redis.keys("hold:*")).sort().map((key) => ({ jid: key.slice(5) })),
      text: (rows, table) =>
        rows.length === 0
          ? "no hold"
          : table(
              ["JID"],
              rows.map((row) => [row.jid]),
            ).join("\n"),
    }),
  ],
});

async function run(args: string[], plugins = [holds]): Promise<string> {
  let out = "";
  const io: CliIO = { out: (text) => void (out += text), err: (text) => void (out += text), env: {} };
  const program = new Command("tsqctl").exitOverride();
  registerPluginViews(program, io, plugins);
  await program.parseAsync([...args, "--redis-url", handle.url], { from: "user" });
  return out;
}

test("a plug-in's view: its text, or its state as JSON, read from Redis", async () => {
  await handle.redis.flushdb();
  assert.equal(await run(["holds"]), "no hold\n");
  await handle.redis.set("hold:b", "1");
  await handle.redis.set("hold:a", "1");
  assert.match(await run(["holds"]), /^JID\s*\na\s*\nb\s*\n$/);
  assert.deepEqual(JSON.parse(await run(["holds", "--json"])), [{ jid: "a" }, { jid: "b" }]);
});

test("a view named like a tsqctl command, or not a command name, is refused by name", () => {
  const program = buildProgram();
  const clash = definePlugin({
    name: "clash",
    views: [{ name: "stats", description: "", read: async () => 0, text: () => "" }],
  });
  assert.throws(
    () => registerPluginViews(program, { out() {}, err() {}, env: {} }, [clash]),
    /a plug-in's view is named "stats", a tsqctl command already; rename it/,
  );
  assert.throws(
    () => defineView({ name: "Holds List", description: "", read: async () => 0, text: () => "" }),
    /lower-case letters and dashes, got "Holds List"/,
  );
  // The built-in features' views are tsqctl's commands: declared by their plug-ins, not listed in tsqctl.
  assert.ok(["limits", "ratelimits"].every((name) => program.commands.some((command) => command.name() === name)));
});
