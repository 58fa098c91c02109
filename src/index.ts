/**
 * tsq's public API. Everything a job module or an application needs; internals are not exported.
 */
export { Job, Setter, type SetOptions } from "./client/Job.js";
export type { JobOptions } from "./client/options.js";
export { Client, type ClientOptions, type ClientMiddlewareArgs, type PushItem, type BulkItem } from "./client/Client.js";
export { configureClient, defaultClient, closeDefaultClient } from "./client/defaultClient.js";
export { Chain, type Middleware, type Next } from "./middleware/Chain.js";
export type { JobPayload, JsonValue } from "./payload.js";
export {
  TsqError,
  ArgumentError,
  PayloadTooLargeError,
  ConfigError,
  UnknownJobError,
  InvalidPayloadError,
} from "./errors.js";
export { redactUrl } from "./redis/connection.js";
export { logger, type Logger } from "./logger.js";
export { configureServer, type ServerConfig, type LifecycleEvent } from "./server/serverConfig.js";
export type { ServerMiddlewareArgs, DeathHandler } from "./server/context.js";
export { VERSION } from "./version.js";
export type { CronDeclaration } from "./cron/index.js";
