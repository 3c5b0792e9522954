// quickfill/report for the "quickfill: Show Dashboard" command: the server
// renders the dashboard page (latency histograms, percentiles over time, SLO
// burn; the same renderer as `quickfill report`) and the command shows it in a
// webview with scripts off (the page has none: plain HTML and SVG with inline
// CSS). No `vscode` import: unit-tested with node's test runner
// (test/dashboard.test.ts).

export const ReportMethod = 'quickfill/report';
export const DashboardViewType = 'quickfill.dashboard';
export const DashboardTitle = 'quickfill dashboard';
export const dashboardWebviewOptions = { enableScripts: false, enableCommandUris: false, localResourceRoots: [] };

// The page's HTML, or an Error saying what is wrong with the answer.
export function parseReport(result: unknown): string {
  const r = result as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') throw new Error('quickfill/report: the answer is not an object');
  if (typeof r.html !== 'string') throw new Error('quickfill/report: the answer has no html');
  if (!r.html.startsWith('<!DOCTYPE html>')) throw new Error('quickfill/report: the html is not a page');
  return r.html;
}
