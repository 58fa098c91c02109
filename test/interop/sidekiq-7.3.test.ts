/** Live interop with Ruby Sidekiq 7.3.10 (../shared/ruby): the tests of modernSidekiq.ts. */
import { sidekiqInteropTests } from "./modernSidekiq.js";

sidekiqInteropTests("7.3");
