/** GET (or another method) against a metrics endpoint on 127.0.0.1, timed. */
export interface Reply {
  status: number;
  body: string;
  contentType: string | null;
  /** Milliseconds from request to the end of the body. */
  ms: number;
}

export async function request(port: number, path: string, method = "GET"): Promise<Reply> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, signal: AbortSignal.timeout(10_000) });
  const body = await response.text();
  return {
    status: response.status,
    body,
    contentType: response.headers.get("content-type"),
    ms: performance.now() - started,
  };
}
