/**
 * The files the dashboard serves under `/assets/`: its own script and styles from the package, and
 * uPlot (the chart library, an npm dependency) from wherever npm installed it, so no page ever loads
 * anything from a CDN and the Content-Security-Policy can stay `'self'`.
 *
 * Only names in the table below are served; the request path never becomes part of a file path, so
 * `/assets/../package.json` and every other traversal is simply an unknown name (404).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The chart library's npm name, resolved from this file so an app's own node_modules layout works. */
const UPLOT = "uplot";

/**
 * Browsers may reuse an asset for 5 min (seconds) without asking: long enough for a page walk, short
 * enough that an upgraded tsq (or uPlot) is picked up soon after a restart.
 */
export const ASSET_MAX_AGE = 300;

interface AssetFile {
  /** Where the file is on disk: the dashboard's own assets folder, or uPlot's dist folder. */
  from: "own" | "uplot";
  file: string;
  type: string;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

const FILES: Record<string, AssetFile> = {
  "web.js": { from: "own", file: "web.js", type: JS },
  "web.css": { from: "own", file: "web.css", type: CSS },
  "charts.js": { from: "own", file: "charts.js", type: JS },
  // The IIFE build defines the global `uPlot` that web.js uses; no module loader needed.
  "uplot.min.js": { from: "uplot", file: "uPlot.iife.min.js", type: JS },
  "uplot.min.css": { from: "uplot", file: "uPlot.min.css", type: CSS },
};

/** One dashboard's assets, each file read once and kept (they are ~60 KB together). */
export class Assets {
  private readonly cache = new Map<string, Promise<Buffer>>();
  private readonly ownDir = new URL("./assets/", import.meta.url);

  /** The content type and bytes of `name` (the part after `/assets/`), or null for an unknown name. */
  async get(name: string): Promise<{ type: string; body: Buffer } | null> {
    if (!Object.hasOwn(FILES, name)) return null;
    const asset = FILES[name]!;
    let body = this.cache.get(name);
    if (!body) {
      body = this.read(asset);
      // A failed read is not kept: the next request tries again (and reports again).
      body.catch(() => this.cache.delete(name));
      this.cache.set(name, body);
    }
    return { type: asset.type, body: await body };
  }

  private async read(asset: AssetFile): Promise<Buffer> {
    if (asset.from === "own") return readFile(new URL(asset.file, this.ownDir));
    let packageJson: string;
    try {
      packageJson = createRequire(import.meta.url).resolve(`${UPLOT}/package.json`);
    } catch {
      throw new Error(
        `the dashboard's charts need the npm package "${UPLOT}" (a dependency of tsq) and it is not installed; run npm install`,
      );
    }
    return readFile(join(dirname(packageJson), "dist", asset.file));
  }
}
