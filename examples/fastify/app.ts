/**
 * A Fastify app with a tsq worker inside it: `POST /signups { email }` enqueues a WelcomeEmailJob,
 * which the app's worker runs with the app's mailer.
 *
 *   const app = buildApp({ redis: process.env.REDIS_URL });
 *   await app.listen({ port: 3000 }); // the worker starts with the server
 *   await app.close();                // and stops with it
 */
import Fastify, { type FastifyInstance } from "fastify";
import { Mailer } from "./mailer.js";
import { tsqPlugin } from "./tsqPlugin.js";
import { WelcomeEmailJob } from "./welcomeEmailJob.js";

export function buildApp(options: { redis?: string } = {}): FastifyInstance {
  const app = Fastify();
  app.decorate("mailer", new Mailer());
  void app.register(tsqPlugin, { ...options, jobs: [WelcomeEmailJob], queues: ["default"], concurrency: 5 });
  app.post<{ Body: { email?: unknown } }>("/signups", async (request, reply) => {
    const email = request.body?.email;
    if (typeof email !== "string" || !email.includes("@"))
      return reply.code(400).send({ error: "body must be { email: string } with an email address" });
    const jid = await WelcomeEmailJob.set({ client: app.tsq.client }).performAsync(email);
    return reply.code(202).send({ jid });
  });
  return app;
}
