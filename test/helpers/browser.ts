/**
 * A dashboard page under watch in Chromium (playwright-core): CSP violations are recorded in
 * `window.__csp` before any page script runs, and console errors and page errors go to `problems`.
 */
import type { Page } from "playwright-core";

export async function watchPage(page: Page, problems: string[]): Promise<Page> {
  // Runs before any page script; CSP does not apply to it. Browser-side code is given as text: the
  // tests compile without the DOM typings.
  await page.addInitScript({
    content:
      "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));",
  });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  return page;
}
