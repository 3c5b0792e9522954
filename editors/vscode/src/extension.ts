// VS Code glue for the quickfill language server. Everything that can be
// decided without the editor lives in config.ts, inline.ts and status.ts
// (unit-tested with node's test runner); this file only wires them to the
// `vscode` API and to vscode-languageclient:
//   - starts `quickfill --stdio` (settings: quickfill.serverPath, modelPath,
//     logLevel, logFile) with the "quickfill" settings object as
//     initializationOptions, and sends workspace/didChangeConfiguration when
//     those settings change (restarts when the command line changes);
//   - ghost text: an InlineCompletionItemProvider that sends
//     textDocument/inlineCompletion (vscode-languageclient 9 has no built-in
//     support for it) and falls back to textDocument/completion;
//   - the suggestion list (textDocument/completion) behind quickfill.suggest.enable;
//   - a status-bar item (model state from quickfill/status, last latency from
//     quickfill/stats);
//   - commands restart / enable / disable / toggle / showLog / showStats,
//     showDashboard (the quickfill/report page in a webview, scripts off), and
//     explainCompletion (quickfill/explainCompletion at the cursor, shown in a
//     read-only document of the quickfill-explain scheme), and doctor
//     (`quickfill doctor`'s report in its own output channel);
//   - next-edit suggestions and acceptance reports (next_edit_ui.ts);
//   - an output channel that receives the server's stderr log.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import {
  LanguageClient, LanguageClientOptions, ServerOptions, TransportKind, State,
} from 'vscode-languageclient/node';

import {
  ExtensionSettings, readSettings, serverCommand, doctorCommand, initializationOptions, serverSettings, serverObject,
  didChangeConfigurationParams, classifyChange, whereToSet,
} from './config';
import {
  InlineCompletionMethod, CompletionMethod, StatsMethod, StatusMethod, inlineCompletionParams, completionParams,
  inlineItems, completionItems, usableAsGhost, GhostItem,
} from './inline';
import { ServerState, parseStats, parseSources, sourcesText, statusText, stateFromStats, StatsView } from './status';
import { ReportMethod, DashboardViewType, DashboardTitle, dashboardWebviewOptions, parseReport } from './dashboard';
import { ExplainMethod, ExplainScheme, explainParams, parseExplanation, explanationText } from './explain';
import { NextEditUi, AcceptInlineCommand } from './next_edit_ui';
import { whyPrivate } from './privacy';

const ContentModified = -32801;
const RequestCancelled = -32800;

let client: LanguageClient | undefined;
let settings: ExtensionSettings;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let state: ServerState = 'stopped';
let lastStats: StatsView | undefined;
let stateDetail: string | undefined;
let statsTimer: NodeJS.Timeout | undefined;
let pollTimer: NodeJS.Timeout | undefined;
let nextEdits: NextEditUi | undefined;

function currentSettings(): ExtensionSettings {
  const cfg = vscode.workspace.getConfiguration('quickfill');
  // quickfill.server: privileged keys from the User settings only (serverObject).
  return readSettings((key) => (key === 'server' ? serverObject(cfg.inspect('server')) : cfg.get(key)));
}

function setState(next: ServerState, detail?: string): void {
  state = next;
  stateDetail = detail;
  const t = statusText(state, lastStats, stateDetail);
  statusItem.text = t.text;
  statusItem.tooltip = t.tooltip;
  statusItem.show();
}

async function refreshStats(): Promise<void> {
  if (!client || client.state !== State.Running) return;
  try {
    const [stats, status] = await Promise.all([
      client.sendRequest(StatsMethod, { recent: 5 }),
      client.sendRequest(StatusMethod, {}).catch(() => undefined),
    ]);
    lastStats = parseStats(stats, status);
    setState(stateFromStats(lastStats, state), stateDetail);
  } catch {
    // Older servers may lack quickfill/stats; the status bar then shows the state only.
  }
}

// Stats after a completion, at most once a second.
function scheduleStats(): void {
  if (statsTimer) return;
  statsTimer = setTimeout(() => { statsTimer = undefined; void refreshStats(); }, 1000);
}

function toVsRange(r: GhostItem['range']): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

function isCancellation(err: unknown): boolean {
  const code = (err as { code?: number } | undefined)?.code;
  return code === ContentModified || code === RequestCancelled;
}

// Documents the server sees (the client's document selector) and gets asked about.
const documentSelector = [{ scheme: 'file' }, { scheme: 'untitled' }];

// Private documents (privacy.ts: the default privacy.exclude list,
// quickfill.privacy.exclude, quickfill.privacy.disabledLanguages) are never
// sent to the server nor asked about; the server keeps them out of prompts too.
function isPrivate(document: vscode.TextDocument): boolean {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const path = document.uri.scheme === 'file' ? document.uri.fsPath : document.uri.path;
  return whyPrivate(path, document.languageId, settings?.privacyExclude ?? [], settings?.disabledLanguages ?? [],
    folders, process.env.HOME ?? '') !== undefined;
}

const inlineProvider: vscode.InlineCompletionItemProvider = {
  async provideInlineCompletionItems(document, position, context, token) {
    if (!client || client.state !== State.Running || !settings.enable || !settings.inlineEnable) return undefined;
    if (isPrivate(document)) return undefined;
    const uri = client.code2ProtocolConverter.asUri(document.uri);
    const pos = { line: position.line, character: position.character };
    const caps: any = client.initializeResult?.capabilities ?? {};
    let items: GhostItem[];
    try {
      if (caps.inlineCompletionProvider) {
        const sel = context.selectedCompletionInfo;
        const params = inlineCompletionParams(uri, pos, context.triggerKind, sel ? {
          range: client.code2ProtocolConverter.asRange(sel.range), text: sel.text,
        } : undefined);
        items = inlineItems(await client.sendRequest(InlineCompletionMethod, params, token), pos);
      } else {
        const params = completionParams(uri, pos, context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke);
        items = completionItems(await client.sendRequest(CompletionMethod, params, token), pos);
      }
    } catch (err) {
      if (!isCancellation(err) && !token.isCancellationRequested) output.appendLine(`inline completion failed: ${String(err)}`);
      return undefined;
    }
    scheduleStats();
    const out = items.filter((it) => usableAsGhost(it, pos)).map((it) => {
      const item = new vscode.InlineCompletionItem(it.insertText, toVsRange(it.range));
      if (it.filterText) item.filterText = it.filterText;
      return item;
    });
    // Acceptance: the first item is the one shown; its command runs when it is accepted.
    if (out.length > 0 && nextEdits) {
      const first = out[0];
      const text = typeof first.insertText === 'string' ? first.insertText : '';
      const length = text.length;
      // The part not typed yet: the item replaces its range (the word before the cursor) up to the cursor.
      const start = first.range?.start;
      const typed = start && start.line === position.line ? Math.max(0, position.character - start.character) : 0;
      const id = nextEdits.inlineShown(length, context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke,
        document.uri.toString(), pos, text.slice(typed));
      first.command = { title: 'quickfill: accepted', command: AcceptInlineCommand, arguments: [id, length] };
    }
    return out;
  },
};

async function startClient(): Promise<void> {
  settings = currentSettings();
  if (!settings.enable) { setState('disabled'); return; }
  const cmd = serverCommand(settings);
  const serverOptions: ServerOptions = {
    run: { command: cmd.command, args: cmd.args, transport: TransportKind.stdio },
    debug: { command: cmd.command, args: cmd.args, transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector,
    outputChannel: output,
    initializationOptions: initializationOptions(settings),
    middleware: {
      provideCompletionItem: (document, position, context, token, next) =>
        settings.suggestEnable && !isPrivate(document) ? next(document, position, context, token) : undefined,
      // Private documents are never sent (the server would keep them out of prompts anyway).
      didOpen: (document, next) => (isPrivate(document) ? Promise.resolve() : next(document)),
      didChange: (event, next) => (isPrivate(event.document) ? Promise.resolve() : next(event)),
      didSave: (document, next) => (isPrivate(document) ? Promise.resolve() : next(document)),
      didClose: (document, next) => (isPrivate(document) ? Promise.resolve() : next(document)),
      // workspace/configuration for the "quickfill" section gets the server-shaped
      // object (as initializationOptions), not the extension's own settings.
      workspace: {
        configuration: async (params, token, next) => {
          const res = await next(params, token);
          if (!Array.isArray(res)) return res;
          return params.items.map((it, i) => (it.section === 'quickfill' ? serverSettings(settings) : res[i]));
        },
      },
    },
  };
  output.appendLine(`starting: ${cmd.command} ${cmd.args.join(' ')}`);
  client = new LanguageClient('quickfill', 'quickfill', serverOptions, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped && state !== 'disabled') setState('stopped');
  });
  setState('starting');
  try {
    await client.start();
  } catch (err) {
    setState('error', String(err));
    output.appendLine(`failed to start ${cmd.command}: ${String(err)}`);
    void vscode.window.showErrorMessage(
      `quickfill: could not start '${cmd.command}': ${whereToSet('quickfill.serverPath')} (see the quickfill output).`);
    return;
  }
  await refreshStats();
  // While a model is still loading, ask again every few seconds.
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = setInterval(() => {
    if (state === 'starting' || state === 'loading') void refreshStats();
  }, 3000);
}

async function stopClient(): Promise<void> {
  if (pollTimer) { clearInterval(pollTimer); pollTimer = undefined; }
  const c = client;
  client = undefined;
  if (c) {
    try { await c.stop(); } catch (err) { output.appendLine(`stop failed: ${String(err)}`); }
  }
  setState(settings?.enable === false ? 'disabled' : 'stopped');
}

async function restartClient(): Promise<void> {
  await stopClient();
  await startClient();
}

async function setEnabled(value: boolean): Promise<void> {
  await vscode.workspace.getConfiguration('quickfill').update('enable', value, vscode.ConfigurationTarget.Global);
}

async function onConfigurationChanged(): Promise<void> {
  const before = settings;
  const after = currentSettings();
  switch (classifyChange(before, after)) {
    case 'start': settings = after; await startClient(); break;
    case 'stop': settings = after; await stopClient(); break;
    case 'restart': await restartClient(); break;
    case 'notify':
      settings = after;
      if (client && client.state === State.Running) {
        await client.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(after));
        setState('starting');
        await refreshStats();
      }
      break;
    default: settings = after;
  }
}

async function showStats(): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showInformationMessage('quickfill: the server is not running.');
    return;
  }
  try {
    const status = await client.sendRequest(StatusMethod, {});
    const stats = await client.sendRequest(StatsMethod, { recent: 10 });
    const sources = sourcesText(parseSources(stats, status));
    if (sources.length > 0) output.appendLine(['Completion sources:', ...sources.map((l) => '  ' + l)].join('\n'));
    output.appendLine(JSON.stringify({ status, stats }, null, 2));
    output.show(true);
  } catch (err) {
    void vscode.window.showWarningMessage(`quickfill/stats failed: ${String(err)}`);
  }
}

// doctor: `quickfill doctor` (the same binary and model) in its own output
// channel; a report with problems exits 1 and is shown all the same.
let doctorOutput: vscode.OutputChannel | undefined;
function runDoctor(): Promise<void> {
  const cmd = doctorCommand(settings);
  return new Promise((resolve) => {
    execFile(cmd.command, cmd.args, { timeout: 60_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      doctorOutput ??= vscode.window.createOutputChannel('quickfill doctor');
      doctorOutput.clear();
      if (stdout) doctorOutput.append(stdout);
      const code = (err as { code?: unknown } | null)?.code;
      if (err && !stdout) {
        doctorOutput.appendLine(`quickfill: could not run '${cmd.command} doctor': ${String(stderr || err.message)}`);
        doctorOutput.appendLine(whereToSet('quickfill.serverPath'));
      } else if (code === 1) {
        void vscode.window.showWarningMessage('quickfill doctor found problems: see its report.');
      }
      doctorOutput.show(true);
      resolve();
    });
  });
}

// showDashboard: the server's quickfill/report page in one webview, refreshed
// each time the command runs.
let dashboard: vscode.WebviewPanel | undefined;
async function showDashboard(): Promise<void> {
  if (!client || client.state !== State.Running) {
    void vscode.window.showInformationMessage('quickfill: the server is not running.');
    return;
  }
  let html: string;
  try {
    html = parseReport(await client.sendRequest(ReportMethod, {}));
  } catch (err) {
    const message = (err as { message?: string } | undefined)?.message ?? String(err);
    void vscode.window.showWarningMessage(`quickfill: cannot show the dashboard: ${message}`);
    return;
  }
  if (!dashboard) {
    dashboard = vscode.window.createWebviewPanel(DashboardViewType, DashboardTitle, vscode.ViewColumn.Beside,
      dashboardWebviewOptions);
    dashboard.onDidDispose(() => { dashboard = undefined; });
  } else {
    dashboard.reveal(vscode.ViewColumn.Beside);
  }
  dashboard.webview.html = html;
}

// Explanations by document path (the documents of the quickfill-explain scheme).
const explanations = new Map<string, string>();
let explainCount = 0;
const explainContent: vscode.TextDocumentContentProvider = {
  provideTextDocumentContent(uri) { return explanations.get(uri.path) ?? ''; },
};

async function explainCompletion(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('quickfill: open a file and place the cursor first.');
    return;
  }
  if (!client || client.state !== State.Running) {
    void vscode.window.showInformationMessage('quickfill: the server is not running.');
    return;
  }
  const document = editor.document;
  if (isPrivate(document)) {
    void vscode.window.showInformationMessage(
      'quickfill: this file is kept out of completions and prompts (quickfill.privacy.*, docs/security.md).');
    return;
  }
  const pos = editor.selection.active;
  const uri = client.code2ProtocolConverter.asUri(document.uri);
  let text: string;
  try {
    const result = await client.sendRequest(ExplainMethod, explainParams(uri, pos));
    text = explanationText(parseExplanation(result), `${uri}:${pos.line + 1}:${pos.character + 1}`);
  } catch (err) {
    const message = (err as { message?: string } | undefined)?.message ?? String(err);
    void vscode.window.showWarningMessage(`quickfill: cannot explain the prompt: ${message}`);
    return;
  }
  const path = `/prompt-${++explainCount}.txt`;
  explanations.set(path, text);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(`${ExplainScheme}:${path}`));
  await vscode.window.showTextDocument(doc, { preview: true });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('quickfill');
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  statusItem.command = 'quickfill.showLog';
  context.subscriptions.push(output, statusItem);
  nextEdits = new NextEditUi(() => client, (s) => output.appendLine(s), isPrivate);
  nextEdits.register(context);
  context.subscriptions.push(
    vscode.commands.registerCommand('quickfill.restart', restartClient),
    vscode.commands.registerCommand('quickfill.enable', () => setEnabled(true)),
    vscode.commands.registerCommand('quickfill.disable', () => setEnabled(false)),
    vscode.commands.registerCommand('quickfill.toggle', () => setEnabled(!settings.enable)),
    vscode.commands.registerCommand('quickfill.showLog', () => output.show(true)),
    vscode.commands.registerCommand('quickfill.showStats', showStats),
    vscode.commands.registerCommand('quickfill.showDashboard', showDashboard),
    vscode.commands.registerCommand('quickfill.doctor', runDoctor),
    vscode.commands.registerCommand('quickfill.explainCompletion', explainCompletion),
    vscode.workspace.registerTextDocumentContentProvider(ExplainScheme, explainContent),
    vscode.languages.registerInlineCompletionItemProvider(documentSelector, inlineProvider),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('quickfill')) void onConfigurationChanged();
    }),
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  if (statsTimer) clearTimeout(statsTimer);
  await stopClient();
}
