/**
 * The form of a POST, wherever it is. Mounted on its own the dashboard reads the request stream; mounted
 * behind an app's body parser (`app.use(express.urlencoded())`, Fastify's or Koa's form parsers) the
 * stream was already read and the fields are on `req.body`, so they are taken from there instead.
 */
import type { IncomingMessage } from "node:http";
import { HttpError } from "./context.js";

/** Bytes of a form body read at most (a bulk action of 1,000 keys is ~60 KB). */
export const MAX_BODY = 1024 * 1024;

/** A request as body-parsing middleware leaves it: the parsed body, if any, on `req.body`. */
type ParsedRequest = IncomingMessage & { body?: unknown };

async function readStream(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, "form too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The fields of an already parsed body: an object of strings or string arrays (repeated fields, such
 * as `key`, keep every value), or the raw text or bytes. Anything else (nested objects from an
 * `extended` parser) is not a field the dashboard reads, and is left out.
 */
function fromParsed(body: unknown): URLSearchParams | null {
  if (typeof body === "string") return new URLSearchParams(body);
  if (Buffer.isBuffer(body)) return new URLSearchParams(body.toString("utf8"));
  if (body === null || typeof body !== "object") return null;
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === "string") form.append(name, value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") form.append(name, v);
  }
  return form;
}

/** The POST's form fields: from the stream when nobody read it, else from what the app parsed. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const consumed = req.readableDidRead || req.readableEnded;
  if (!consumed) return new URLSearchParams(await readStream(req));
  const parsed = fromParsed((req as ParsedRequest).body);
  if (parsed === null)
    throw new HttpError(
      400,
      "the form body was already read by the app and left no req.body; mount the dashboard before the body parser, or copy the parsed body to the Node request's body",
    );
  return parsed;
}
