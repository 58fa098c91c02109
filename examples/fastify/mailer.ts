/** The app's mail service, decorated onto the Fastify instance as `app.mailer`. Keeps what it sent. */
export class Mailer {
  readonly sent: { to: string; jid: string | undefined }[] = [];

  /** A message body; takes a while, as a template engine or a remote call does. */
  async render(template: string, to: string): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, 20)); // ms
    return `${template} for ${to}`;
  }

  /** Sends `body`; `jid` names the job that sent it, for the log. */
  async send(to: string, body: string, jid: string | undefined): Promise<void> {
    this.sent.push({ to, jid });
    void body;
  }
}

declare module "fastify" {
  interface FastifyInstance {
    mailer: Mailer;
  }
}
