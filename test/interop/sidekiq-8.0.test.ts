/** Live interop with Ruby Sidekiq 8.0.10 (../shared/ruby, Ruby 3.1 with -rset): the tests of modernSidekiq.ts. */
import { sidekiqInteropTests } from "./modernSidekiq.js";

sidekiqInteropTests("8.0");
