// How a command reports an error that escaped it: the stack only (an error's attached objects can hold
// a password, e.g. ioredis's failed AUTH command), with secrets masked by tsq's own redaction.
export async function reportCrash(program, error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("/dist/")) {
    process.stderr.write(`${program}: not built yet; run \`npm run build\` (${error.message})\n`);
    return;
  }
  const text = String(error?.stack ?? error);
  let redact = (t) => t.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s@/'"<>]*@/gi, "$1***@");
  try {
    ({ redactText: redact } = await import("../dist/src/platform/secrets.js"));
  } catch {
    // dist/ is missing: the fallback above masks URL credentials
  }
  process.stderr.write(`${program}: ${redact(text)}\n`);
}
