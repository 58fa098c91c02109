/** The kill switches' one worker setting, declared here rather than in the core's defaults. */
import { MAX_INTERVAL } from "../../../platform/config/bounds.js";
import { defineSetting } from "../../../platform/config/settings.js";

declare module "../../../platform/config/options.js" {
  interface WorkerOptions {
    /**
     * Seconds a worker keeps its copy of the kill switches (`tsqctl defer|drop|resume`) before reading
     * them again (one HGETALL): how soon a switch takes effect. Shorter reacts faster, costs a read more
     * often. Config `kill_switch_refresh_interval`; default 2.
     */
    killSwitchRefreshInterval?: number;
  }
}

/** Seconds a worker's copy of the switches stays fresh (above 0, at most a day: it is compared, never a timer). */
export const refreshInterval = defineSetting({
  key: "killSwitchRefreshInterval",
  default: 2,
  min: 0,
  above: true,
  max: MAX_INTERVAL,
  unit: "seconds",
});
