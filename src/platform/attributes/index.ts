/** Worker attributes, GitLab-syntax queries and routing rules: the public part. */
export {
  workerAttributes,
  generatedQueueName,
  type WorkerAttributeFields,
  type WorkerAttributes,
  type Urgency,
  type ResourceBoundary,
} from "./attributes.js";
export { parseQuery, matches, type Query } from "./query.js";
export { WorkerRouter, configureRouting, type RoutingRule } from "./WorkerRouter.js";
