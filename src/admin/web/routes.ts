/**
 * Every route, at Sidekiq Web's URLs where Sidekiq has the page. Patterns match the path after the
 * mount prefix; capture groups become `ctx.params`.
 */
import { redirect, type Route } from "./context.js";
import { busy, busyAction } from "./pages/busy.js";
import { dashboard, stats, statsQueues, stream } from "./pages/dashboard.js";
import { failures, failuresAction } from "./pages/failures.js";
import { classMetrics, metrics } from "./pages/metrics.js";
import { cron, cronAction } from "./pages/cron.js";
import { bulkCancel, bulkPage } from "./pages/bulk.js";
import { deleteQueueJob, queueAction, queuePage, queues } from "./pages/queues.js";
import { search, searchAction } from "./pages/search.js";
import { waiting } from "./pages/waiting.js";
import { jobPage } from "./pages/job.js";
import { viewList, viewPage } from "./pages/views.js";
import {
  SET_KINDS,
  setAll,
  setBulk,
  setEntry,
  setEntryAction,
  setEntryJson,
  setExport,
  setList,
} from "./pages/sets.js";

export interface RouteDef {
  method: "GET" | "POST";
  pattern: RegExp;
  handler: Route;
}

const SEGMENT = "([^/]+)";

function r(method: RouteDef["method"], pattern: string, handler: Route): RouteDef {
  return { method, pattern: new RegExp(`^${pattern}$`), handler };
}

export const ROUTES: RouteDef[] = [
  r("GET", "/", dashboard),
  r("GET", "/stats", stats),
  r("GET", "/stats/queues", statsQueues),
  // Sidekiq's older URL for the same JSON.
  r("GET", "/dashboard/stats", async (ctx) => redirect(`${ctx.base}/stats`)),
  r("GET", "/stream", stream),
  r("GET", "/busy", busy),
  r("POST", "/busy", busyAction),
  r("GET", "/queues", queues),
  r("GET", `/queues/${SEGMENT}`, queuePage),
  r("POST", `/queues/${SEGMENT}`, queueAction),
  r("POST", `/queues/${SEGMENT}/delete`, deleteQueueJob),
  r("GET", "/metrics", metrics),
  r("GET", `/metrics/${SEGMENT}`, classMetrics),
  r("GET", "/cron", cron),
  r("POST", `/cron/${SEGMENT}/${SEGMENT}/${SEGMENT}`, cronAction),
  r("GET", "/bulk", bulkPage),
  r("POST", `/bulk/${SEGMENT}/cancel`, bulkCancel),
  r("GET", "/failures", failures),
  r("POST", "/failures", failuresAction),
  r("GET", "/search", search),
  r("POST", "/search", searchAction),
  r("GET", "/waiting", waiting),
  r("GET", `/jobs/${SEGMENT}`, jobPage),
  r("GET", "/views", viewList),
  r("GET", `/views/${SEGMENT}`, viewPage),
  ...Object.values(SET_KINDS).flatMap((kind) => [
    r("GET", `/${kind.path}`, setList(kind)),
    r("POST", `/${kind.path}`, setBulk(kind)),
    r("POST", `/${kind.path}/all/${SEGMENT}`, setAll(kind)),
    r("GET", `/${kind.path}/export`, setExport(kind)),
    r("GET", `/${kind.path}/${SEGMENT}`, setEntry(kind)),
    r("GET", `/${kind.path}/${SEGMENT}/json`, setEntryJson(kind)),
    r("POST", `/${kind.path}/${SEGMENT}`, setEntryAction(kind)),
  ]),
];

/** The route and decoded params for a method and path, or null (and whether the path exists at all). */
export function match(
  method: string,
  path: string,
): { def: RouteDef; params: string[] } | { def: null; known: boolean } {
  let known = false;
  for (const def of ROUTES) {
    const m = def.pattern.exec(path);
    if (!m) continue;
    known = true;
    if (def.method === method || (method === "HEAD" && def.method === "GET")) {
      try {
        return { def, params: m.slice(1).map((p) => decodeURIComponent(p)) };
      } catch {
        return { def: null, known: false };
      }
    }
  }
  return { def: null, known };
}
