/**
 * The import rules that keep src/ drawn as docs/internals.md draws it (`npm run lint:deps`;
 * test/architecture.test.ts runs the same rules and checks that a bad import is caught).
 *
 *   wire        the Sidekiq wire contract: imports nothing of tsq and no package, only node: builtins;
 *               key names come from src/wire/keys.ts only (its parts under src/wire/keys/ are its own)
 *   platform    Redis, config, logging: imports wire and itself only
 *   core        client, server, cluster: never a feature (features plug in through the seam)
 *   plugins.ts  the ordered list of built-ins: only entry points (cli, index.ts, library) and tests
 *   admin       api, web, tsqctl: nothing on the job path (client, server, cluster, features) imports it
 *   entries     cli, library, index.ts: nothing below them imports them; metrics never imports cluster
 *   cycles      none, type-only imports included: a cycle is a layering mistake whatever it carries
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "An import cycle means two modules are one; split the shared part out or invert one edge.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "wire-imports-nothing",
      comment: "src/wire is the bottom layer: only node: builtins and other wire modules.",
      severity: "error",
      from: { path: "^src/wire/" },
      to: { pathNot: "^src/wire/", dependencyTypesNot: ["core"] },
    },
    {
      name: "keys-from-one-module",
      comment:
        "Every Redis key name is reached through src/wire/keys.ts; its parts in src/wire/keys/ are not imported directly.",
      severity: "error",
      from: { pathNot: "^src/wire/keys(\\.ts$|/)" },
      to: { path: "^src/wire/keys/" },
    },
    {
      name: "platform-imports-wire-and-platform",
      comment: "src/platform sits on the wire contract only; anything above it must be passed in.",
      severity: "error",
      from: { path: "^src/platform/" },
      to: { path: "^src/", pathNot: "^src/(wire|platform)/" },
    },
    {
      name: "core-never-imports-features",
      comment: "client, server and cluster reach features only through the plug-in seam (src/server/plugin.ts).",
      severity: "error",
      from: { path: "^src/(wire|platform|client|server|cluster)/" },
      to: { path: "^src/features/" },
    },
    {
      name: "plugins-list-only-from-entry-points",
      comment:
        "src/plugins.ts imports every feature; only entry points, the package's default list (src/packagePlugins.ts) and tests may pull it in.",
      severity: "error",
      from: { pathNot: "^(src/cli/|src/index\\.ts$|src/library/|src/packagePlugins\\.ts$|test/)" },
      to: { path: "^src/plugins\\.ts$" },
    },
    {
      name: "package-list-only-above-features",
      comment:
        "src/packagePlugins.ts brings every feature: the admin tools and the entry points use it, never the core.",
      severity: "error",
      from: { path: "^src/(wire|platform|client|server|cluster|features|metrics|options)/" },
      to: { path: "^src/packagePlugins\\.ts$" },
    },
    {
      name: "job-path-never-imports-admin",
      comment: "admin (api, web, tsqctl) reads Redis for operators; the job path must not depend on it.",
      severity: "error",
      from: { path: "^src/(wire|platform|client|server|cluster|features)/" },
      to: { path: "^src/admin/" },
    },
    {
      name: "core-never-imports-entry-points",
      comment:
        "client, server, cluster and metrics are below the entry points (cli, library, index.ts); an entry point passes what they need in.",
      severity: "error",
      from: { path: "^src/(wire|platform|client|server|cluster|metrics)/" },
      to: { path: "^src/(cli/|library/|index\\.ts$)" },
    },
    {
      name: "job-path-never-imports-metrics",
      comment: "Prometheus metrics observe a worker from above (its context's events); the job path never calls them.",
      severity: "error",
      from: { path: "^src/(wire|platform|client|server)/" },
      to: { path: "^src/metrics/" },
    },
    {
      name: "metrics-never-imports-cluster",
      comment: "A worker's metrics know nothing of the supervisor; the cluster's metrics live in src/cluster/.",
      severity: "error",
      from: { path: "^src/metrics/" },
      to: { path: "^src/cluster/" },
    },
    {
      name: "cluster-never-imports-options",
      comment:
        "Options are parsed into the cluster's terms (options/ imports cluster/); the cluster reads them through its own types.",
      severity: "error",
      from: { path: "^src/cluster/" },
      to: { path: "^src/options/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that does not resolve is a typo or a missing dependency.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    // Type-only imports count: `import type` still draws an edge a reader has to follow.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
