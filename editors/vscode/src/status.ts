// The status-bar item's state: whether the server runs, whether a model is
// loaded and whether one is loading (from `quickfill/status`), and the
// last completion latency (from `quickfill/stats`). Pure: extension.ts only
// copies text/tooltip onto a vscode.StatusBarItem.
//
// `quickfill/stats` and `quickfill/status` are read tolerantly: field names are
// looked up in camelCase and snake_case, missing fields stay undefined, so a
// server that adds or lacks fields keeps working.

import { whereToSet } from './config';

export type ServerState = 'stopped' | 'starting' | 'loading' | 'ready' | 'no-model' | 'error' | 'disabled';

export interface StatsView {
  modelLoaded: boolean | undefined;
  modelLoading: boolean | undefined;
  modelName: string | undefined;
  noModelReason: string | undefined;
  lastLatencyMs: number | undefined;
  requests: number | undefined;
  p50Ms: number | undefined;
  p90Ms: number | undefined;
  p99Ms: number | undefined;
  // Where the model lives: 'daemon' (the per-user daemon, shared by
  // sharedBy windows), 'process' (this window's server), or undefined when
  // the server does not say.
  modelHost: 'daemon' | 'process' | undefined;
  sharedBy: number | undefined;
  daemonPid: number | undefined;
}

function camel(s: string): string {
  return s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function lookup(obj: any, path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = p in cur ? cur[p] : cur[camel(p)];
  }
  return cur;
}

function firstNumber(obj: any, paths: string[][]): number | undefined {
  for (const p of paths) {
    const v = lookup(obj, p);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}

function firstString(obj: any, paths: string[][]): string | undefined {
  for (const p of paths) {
    const v = lookup(obj, p);
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

function firstBool(obj: any, paths: string[][]): boolean | undefined {
  for (const p of paths) {
    const v = lookup(obj, p);
    if (typeof v === 'boolean') return v;
  }
  return undefined;
}

// The most recent answered request of `recent` (oldest first), if any.
function lastAnswered(stats: any): any {
  const recent = lookup(stats, ['recent']);
  if (!Array.isArray(recent)) return undefined;
  for (let i = recent.length - 1; i >= 0; i--) {
    const r = recent[i];
    if (r && typeof r === 'object' && (r.outcome === undefined || r.outcome === 'answered')) return r;
  }
  return undefined;
}

// `stats`: the quickfill/stats answer (requests, totalMs percentiles, recent
// requests oldest first). `status`: the quickfill/status answer (modelLoaded,
// modelLoading, model description, noModelReason). Either may be missing.
export function parseStats(stats: unknown, status?: unknown): StatsView {
  const s: any = stats && typeof stats === 'object' ? stats : {};
  const st: any = status && typeof status === 'object' ? status : {};
  const modelName = firstString(st, [['model'], ['model_path']]) ?? firstString(s, [['model'], ['model', 'name']]);
  let modelLoaded = firstBool(st, [['model_loaded']]) ?? firstBool(s, [['model_loaded'], ['model', 'loaded']]);
  if (modelLoaded === undefined && modelName !== undefined) modelLoaded = true;
  const last = lastAnswered(s);
  const daemon = lookup(st, ['daemon']);
  const modelHost = daemon === null ? 'process' : daemon && typeof daemon === 'object' ? 'daemon' : undefined;
  return {
    modelLoaded,
    modelLoading: firstBool(st, [['model_loading']]),
    modelName,
    noModelReason: firstString(st, [['no_model_reason']]),
    // What the user waited for: arrival to reply (wallMs), else the pipeline's end-to-end time.
    lastLatencyMs: firstNumber(last, [['wall_ms'], ['total_ms']]) ??
                   firstNumber(s, [['last', 'wall_ms'], ['last', 'total_ms'], ['last_latency_ms']]),
    requests: firstNumber(s, [['requests']]),
    // Percentiles only once something was answered (count 0 reports zeros).
    p50Ms: firstNumber(s, [['total_ms', 'count']]) === 0 ? undefined : firstNumber(s, [['total_ms', 'p50']]),
    p90Ms: firstNumber(s, [['total_ms', 'count']]) === 0 ? undefined : firstNumber(s, [['total_ms', 'p90']]),
    p99Ms: firstNumber(s, [['total_ms', 'count']]) === 0 ? undefined : firstNumber(s, [['total_ms', 'p99']]),
    modelHost,
    sharedBy: firstNumber(daemon, [['sessions_on_engine']]),
    daemonPid: firstNumber(daemon, [['pid']]),
  };
}

export interface StatusText {
  text: string;     // status bar text (may use $(icon) syntax)
  tooltip: string;
}

function ms(v: number): string {
  return v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`;
}

export function statusText(state: ServerState, stats?: StatsView, detail?: string): StatusText {
  const lines: string[] = [];
  let text: string;
  switch (state) {
    case 'disabled': text = '$(circle-slash) quickfill'; lines.push('quickfill is disabled'); break;
    case 'stopped': text = '$(debug-stop) quickfill'; lines.push('quickfill server is not running'); break;
    case 'starting': text = '$(sync~spin) quickfill'; lines.push('quickfill server is starting'); break;
    case 'loading': text = '$(sync~spin) quickfill'; lines.push('Loading model' + (detail ? `: ${detail}` : '')); break;
    case 'no-model': text = '$(warning) quickfill: no model'; lines.push(`No model loaded: ${whereToSet('quickfill.modelPath')}`); break;
    case 'error': text = '$(error) quickfill'; lines.push('quickfill server failed' + (detail ? `: ${detail}` : '')); break;
    case 'ready':
    default:
      text = '$(sparkle) quickfill';
      if (stats?.lastLatencyMs !== undefined) text += ` ${ms(stats.lastLatencyMs)}`;
      lines.push('quickfill is ready');
  }
  if (stats) {
    if (stats.modelLoaded === false) lines.push('Model: none loaded' + (stats.noModelReason ? ` (${stats.noModelReason})` : ''));
    else if (stats.modelName) lines.push(`Model: ${stats.modelName}`);
    if (stats.modelHost === 'process') lines.push('Model held by this window\'s server');
    else if (stats.modelHost === 'daemon') {
      const pid = stats.daemonPid !== undefined ? ` (pid ${stats.daemonPid})` : '';
      const others = (stats.sharedBy ?? 0) - 1;
      lines.push(`Model held by the quickfill daemon${pid}` +
                 (others > 0 ? `, shared with ${others} other window${others === 1 ? '' : 's'}` : ''));
    }
    if (stats.lastLatencyMs !== undefined) lines.push(`Last completion: ${ms(stats.lastLatencyMs)}`);
    if (stats.p50Ms !== undefined && stats.p90Ms !== undefined && stats.p99Ms !== undefined) {
      lines.push(`p50/p90/p99: ${ms(stats.p50Ms)} / ${ms(stats.p90Ms)} / ${ms(stats.p99Ms)}`);
    }
    if (stats.requests !== undefined) lines.push(`Requests: ${stats.requests}`);
  }
  if (state !== 'disabled') lines.push('Click to show the server log');
  return { text, tooltip: lines.join('\n') };
}

// Classifies a window/showMessage text from the server: the server says so when no model is loaded.
export function isNoModelMessage(message: string): boolean {
  return /no model/i.test(message);
}

// State after a stats answer arrives.
export function stateFromStats(stats: StatsView, current: ServerState): ServerState {
  if (current === 'disabled' || current === 'stopped' || current === 'error') return current;
  if (stats.modelLoading === true) return 'loading';
  if (stats.modelLoaded === false) return 'no-model';
  if (stats.modelLoaded === true) return 'ready';
  return current === 'starting' || current === 'loading' ? 'ready' : current;
}

// One completion source as the stats view lists it (quickfill/stats `sources`
// merged with quickfill/status `sources` for the last error).
export interface SourceView {
  name: string;
  kind: string;
  state: string;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  p50Ms: number | undefined;
  p90Ms: number | undefined;
  lastError: string | undefined;
}

export function parseSources(stats: unknown, status?: unknown): SourceView[] {
  const list = lookup(stats, ['sources']);
  if (!Array.isArray(list)) return [];
  const health = lookup(status, ['sources']);
  return list.filter((s) => s && typeof s === 'object' && typeof s.name === 'string').map((s: any) => {
    const h: any = Array.isArray(health) ? health.find((x: any) => x && x.name === s.name) : undefined;
    const answered = firstNumber(s, [['latency_ms', 'count']]) ?? 0;
    return {
      name: s.name,
      kind: firstString(s, [['kind']]) ?? '?',
      state: firstString(h, [['state']]) ?? firstString(s, [['state']]) ?? '?',
      requests: firstNumber(s, [['requests']]) ?? 0,
      errors: firstNumber(s, [['errors']]) ?? 0,
      promptTokens: firstNumber(s, [['prompt_tokens']]) ?? 0,
      completionTokens: firstNumber(s, [['completion_tokens']]) ?? 0,
      p50Ms: answered > 0 ? firstNumber(s, [['latency_ms', 'p50']]) : undefined,
      p90Ms: answered > 0 ? firstNumber(s, [['latency_ms', 'p90']]) : undefined,
      lastError: firstString(h, [['last_error']]),
    };
  });
}

// One line per source: "cloud (openai, ok): 12 requests, 1 error, 3400+210 tokens, p50/p90 180 ms / 420 ms".
export function sourcesText(sources: SourceView[]): string[] {
  return sources.map((s) => {
    let line = `${s.name} (${s.kind}, ${s.state}): ${s.requests} request${s.requests === 1 ? '' : 's'}, ` +
               `${s.errors} error${s.errors === 1 ? '' : 's'}, ${s.promptTokens}+${s.completionTokens} tokens`;
    if (s.p50Ms !== undefined && s.p90Ms !== undefined) line += `, p50/p90 ${ms(s.p50Ms)} / ${ms(s.p90Ms)}`;
    if (s.lastError) line += ` -- last error: ${s.lastError}`;
    return line;
  });
}
