/**
 * `/views` and `/views/<name>`: the plug-ins' status views (server/pluginViews.ts), the same text
 * `tsqctl <name>` prints, read-only. The text is made from Redis and goes through `html` (escaped).
 */
import { packagePlugins } from "../../../packagePlugins.js";
import type { PluginView } from "../../../server/pluginViews.js";
import { HttpError, page, type RequestContext, type RouteResult } from "../context.js";
import { html } from "../html.js";
import { tableLines } from "../../tsqctl/format.js";

function views(): PluginView[] {
  return packagePlugins().flatMap((plugin) => plugin.views ?? []);
}

export async function viewList(ctx: RequestContext): Promise<RouteResult> {
  const body = html`<h3>Feature views</h3>
    <ul id="views">
      ${views().map((view) => html`<li><a href="${ctx.base}/views/${view.name}">${view.name}</a>: ${view.description}</li>`)}
    </ul>`;
  return page("Views", body);
}

export async function viewPage(ctx: RequestContext): Promise<RouteResult> {
  const name = ctx.params[0];
  const view = views().find((candidate) => candidate.name === name);
  if (!view) throw new HttpError(404, `no view named ${name ?? ""}`);
  const text = view.text(await view.read(ctx.redis), tableLines);
  return page(
    view.name,
    html`<h3>${view.description}</h3>
      <pre id="view">${text}</pre>`,
  );
}
