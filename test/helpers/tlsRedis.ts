/**
 * A redis-server that speaks only TLS (`--port 0 --tls-port P`), requiring client certificates, with
 * certificates made by the openssl CLI in a private temporary directory: a CA, a server certificate for
 * 127.0.0.1, a client certificate whose key is encrypted with a passphrase, and an unrelated CA (for
 * the wrong-CA case). An ACL user `tsq` is created and the default user switched off.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { freePort } from "./redis.js";

export interface TlsRedis {
  port: number;
  dir: string;
  files: { ca: string; cert: string; key: string; wrongCa: string };
  user: string;
  password: string;
  passphrase: string;
  /** rediss://tsq:<password>@127.0.0.1:<port>/0?tls_ca=...&tls_cert=...&tls_key=...&tls_key_passphrase=... */
  url(ca?: string): string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/**
 * Makes the certificates in `dir`: ca.pem (+ ca.key), server.pem/server.key for 127.0.0.1, client.pem
 * with client.key encrypted by `passphrase`, and wrong-ca.pem.
 */
export function makeCertificates(dir: string, passphrase: string): void {
  // Two CAs: the one that signs everything, and one that signs nothing we use (the wrong CA).
  for (const ca of ["ca", "wrong-ca"]) {
    openssl(dir, [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${ca}.key`,
      "-out",
      `${ca}.pem`,
      "-days",
      "2",
      "-subj",
      `/CN=tsq test ${ca}`,
    ]);
  }
  writeFileSync(join(dir, "server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  ]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
  // The client key is encrypted: tsq must be given its passphrase, and must never print it.
  openssl(dir, [
    "genpkey",
    "-algorithm",
    "RSA",
    "-pkeyopt",
    "rsa_keygen_bits:2048",
    "-aes-256-cbc",
    "-pass",
    `pass:${passphrase}`,
    "-out",
    "client.key",
  ]);
  openssl(dir, [
    "req",
    "-new",
    "-key",
    "client.key",
    "-passin",
    `pass:${passphrase}`,
    "-out",
    "client.csr",
    "-subj",
    "/CN=tsq",
  ]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "client.pem",
    "-days",
    "2",
  ]);
}

function cli(dir: string, port: number, args: string[], auth: string[] = []): string {
  const result = spawnSync(
    "redis-cli",
    [
      "--tls",
      "--cacert",
      "ca.pem",
      "--cert",
      "server.pem",
      "--key",
      "server.key",
      "-p",
      String(port),
      ...auth,
      ...args,
    ],
    { cwd: dir, encoding: "utf8" },
  );
  return `${result.stdout}${result.stderr}`.trim();
}

export async function startTlsRedis(): Promise<TlsRedis> {
  const dir = mkdtempSync(join(tmpdir(), "tsq-tls-"));
  const password = "acl-user-Pa55word-7f3c9e";
  const passphrase = "key-Passphrase-b81d42";
  makeCertificates(dir, passphrase);
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--tls-cert-file",
      "server.pem",
      "--tls-key-file",
      "server.key",
      "--tls-ca-cert-file",
      "ca.pem",
      "--tls-auth-clients",
      "yes",
    ],
    { cwd: dir, stdio: "ignore" },
  );
  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      });
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 10_000;
  while (cli(dir, port, ["ping"]) !== "PONG") {
    if (child.exitCode !== null) throw new Error(`redis-server (TLS) exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`redis-server (TLS) on port ${port} did not answer within 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const created = cli(dir, port, ["ACL", "SETUSER", "tsq", "on", `>${password}`, "~*", "&*", "+@all"]);
  if (created !== "OK") throw new Error(`ACL SETUSER failed: ${created}`);
  // From now on only the ACL user gets in.
  cli(dir, port, ["ACL", "SETUSER", "default", "off"]);
  const files = {
    ca: join(dir, "ca.pem"),
    cert: join(dir, "client.pem"),
    key: join(dir, "client.key"),
    wrongCa: join(dir, "wrong-ca.pem"),
  };
  return {
    port,
    dir,
    files,
    user: "tsq",
    password,
    passphrase,
    url(ca = files.ca) {
      const query = new URLSearchParams({
        tls_ca: ca,
        tls_cert: files.cert,
        tls_key: files.key,
        tls_key_passphrase: passphrase,
      });
      return `rediss://tsq:${password}@127.0.0.1:${port}/0?${query.toString()}`;
    },
  };
}
