/** The app's mail service, decorated onto the Fastify instance as `app.mailer`. Keeps what it sent. */
export class Mailer {
  readonly sent: { to: string; jid: string | undefined }[] = [];

  async send(to: string, jid: string | undefined): Promise<void> {
    this.sent.push({ to, jid });
  }
}

declare module "fastify" {
  interface FastifyInstance {
    mailer: Mailer;
  }
}
