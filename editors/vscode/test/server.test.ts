// Protocol test: the real quickfill binary driven over stdio by the real
// vscode-jsonrpc (StreamMessageReader/Writer, the transport vscode-languageclient
// uses), started with the command line and initializationOptions that the
// extension's config.ts builds, and answered through inline.ts / status.ts, the
// same code the extension runs inside VS Code.
//
// Environment: QUICKFILL_BIN (the binary; the test is skipped without it) and
// QUICKFILL_MODEL (a GGUF file; the tests that need completions are skipped
// without it). No timing asserts: deadlines are generous and only a safety net.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter,
} from 'vscode-jsonrpc/node';

import { readSettings, serverCommand, initializationOptions, didChangeConfigurationParams, ExtensionSettings } from '../src/config';
import {
  InlineCompletionMethod, CompletionMethod, StatsMethod, StatusMethod, inlineCompletionParams, completionParams,
  inlineItems, completionItems, usableAsGhost, Position,
} from '../src/inline';
import { parseStats, statusText, stateFromStats, isNoModelMessage } from '../src/status';

const bin = process.env.QUICKFILL_BIN ?? '';
const model = process.env.QUICKFILL_MODEL ?? '';
const haveBin = bin !== '' && fs.existsSync(bin);
const haveModel = model !== '' && fs.existsSync(model);
const WAIT_MS = Number(process.env.QUICKFILL_TEST_WAIT_MS ?? 300000);  // safety net only

interface Session {
  proc: ChildProcess;
  conn: MessageConnection;
  stderr: string[];
  messages: { type: number; message: string }[];
  progress: unknown[];
  exited: Promise<number | null>;
}

function settingsFor(modelPath: string, extra: Record<string, unknown> = {}): ExtensionSettings {
  return readSettings((key) => ({
    serverPath: bin,
    modelPath,
    logLevel: 'debug',
    // Budgets far beyond what the tiny test models need: a loaded CI machine
    // must not turn into empty answers. Not a timing assert.
    'completion.autoDeadlineMs': 60000,
    'completion.explicitDeadlineMs': 60000,
    ...extra,
  } as Record<string, unknown>)[key]);
}

function start(settings: ExtensionSettings): Session {
  const cmd = serverCommand(settings);
  const proc = spawn(cmd.command, cmd.args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (d: string) => stderr.push(d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  const s: Session = { proc, conn, stderr, messages: [], progress: [], exited };
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('client/registerCapability', () => null);
  conn.onRequest('workspace/configuration', (p: { items: unknown[] }) =>
    p.items.map(() => initializationOptions(settings).quickfill));
  conn.onRequest('window/showMessageRequest', () => null);
  conn.onNotification('window/showMessage', (m: { type: number; message: string }) => s.messages.push(m));
  conn.onNotification('window/logMessage', () => undefined);
  conn.onNotification('$/progress', (p: unknown) => s.progress.push(p));
  conn.onNotification(() => undefined);
  conn.listen();
  return s;
}

// The client capabilities a VS Code with vscode-languageclient 9 announces for
// what quickfill uses, plus LSP 3.18 inlineCompletion.
const clientCapabilities = {
  general: { positionEncodings: ['utf-16'] },
  window: { workDoneProgress: true, showMessage: {} },
  workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true, willSave: true, willSaveWaitUntil: true },
    completion: {
      dynamicRegistration: true,
      contextSupport: true,
      completionItem: { snippetSupport: true, insertReplaceSupport: true, labelDetailsSupport: true },
      completionList: { itemDefaults: ['commitCharacters', 'editRange', 'insertTextFormat', 'insertTextMode'] },
    },
    inlineCompletion: { dynamicRegistration: false },
  },
};

async function initialize(s: Session, settings: ExtensionSettings, rootDir: string): Promise<any> {
  const result: any = await s.conn.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'Visual Studio Code', version: '1.82.0' },
    rootUri: pathToFileURL(rootDir).href,
    workspaceFolders: [{ uri: pathToFileURL(rootDir).href, name: 'ws' }],
    capabilities: clientCapabilities,
    initializationOptions: initializationOptions(settings),
  });
  await s.conn.sendNotification('initialized', {});
  return result;
}

async function shutdown(s: Session): Promise<number | null> {
  await s.conn.sendRequest('shutdown');
  await s.conn.sendNotification('exit');
  const code = await s.exited;
  s.conn.dispose();
  return code;
}

function sleep(ms: number) { return new Promise((r) => setTimeout(r, ms)); }

// Polls quickfill/status until the model has finished loading; returns the last answer.
async function waitForModelLoad(s: Session): Promise<any> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const raw: any = await s.conn.sendRequest(StatusMethod, {});
    const view = parseStats(undefined, raw);
    if (view.modelLoading !== true && view.modelLoaded !== undefined) return raw;
    if (Date.now() > until) assert.fail(`the model load never finished; last status: ${JSON.stringify(raw)}`);
    await sleep(100);
  }
}

async function viewOf(s: Session) {
  return parseStats(await s.conn.sendRequest(StatsMethod, {}), await s.conn.sendRequest(StatusMethod, {}));
}

function logTail(s: Session): string {
  return s.stderr.join('').split('\n').slice(-40).join('\n');
}

const skipNoBin = haveBin ? false : 'QUICKFILL_BIN is not set to an existing quickfill binary';
const skipNoModel = skipNoBin || (haveModel ? false : 'no model: set QUICKFILL_MODEL to a GGUF file');

test('initialize advertises what the extension relies on; shutdown exits 0', { skip: skipNoBin }, async () => {
  const settings = settingsFor('');
  const s = start(settings);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qf-vscode-'));
  try {
    const init = await initialize(s, settings, dir);
    const caps = init.capabilities;
    const sync = caps.textDocumentSync;
    const change = typeof sync === 'number' ? sync : sync?.change;
    assert.equal(change, 2, 'incremental text document sync');
    if (typeof sync === 'object') assert.equal(sync.openClose, true);
    assert.ok(caps.completionProvider, 'completionProvider');
    assert.ok(Array.isArray(caps.completionProvider.triggerCharacters), 'completion trigger characters');
    assert.ok(caps.inlineCompletionProvider, 'inlineCompletionProvider (the extension uses it for ghost text)');
    assert.equal(caps.positionEncoding ?? 'utf-16', 'utf-16', 'VS Code speaks UTF-16 positions');
    // quickfill/stats and quickfill/status answer; the status bar reads them.
    const stats = await viewOf(s);
    assert.ok(statusText(stateFromStats(stats, 'starting'), stats).text.includes('quickfill'));
    assert.notEqual(stats.modelHost, undefined, 'quickfill/status says where the model lives (daemon: null or an object)');
    assert.equal(await shutdown(s), 0);
  } catch (e) {
    s.proc.kill();
    throw new Error(`${String(e)}\n--- server log ---\n${logTail(s)}`);
  }
});

test('without a model: empty answers and a message for the user', { skip: skipNoBin }, async () => {
  const missing = path.join(os.tmpdir(), `qf-no-such-model-${process.pid}.gguf`);
  const settings = settingsFor(missing);
  const s = start(settings);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qf-vscode-'));
  try {
    await initialize(s, settings, dir);
    const status = await waitForModelLoad(s);
    assert.equal(status.modelLoaded, false, `no model loaded from ${missing}`);
    const uri = pathToFileURL(path.join(dir, 'a.py')).href;
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version: 1, text: 'def f(x):\n    return ' },
    });
    const pos = { line: 1, character: 11 };
    const list = await s.conn.sendRequest(CompletionMethod, completionParams(uri, pos, true));
    assert.deepEqual(completionItems(list, pos), [], 'no fake items without a model');
    const inline = await s.conn.sendRequest(InlineCompletionMethod, inlineCompletionParams(uri, pos, 0));
    assert.deepEqual(inlineItems(inline, pos), []);
    const until = Date.now() + 30000;
    while (s.messages.length === 0 && Date.now() < until) await sleep(50);
    assert.ok(s.messages.length > 0, 'window/showMessage tells the user that no model is loaded');
    assert.ok(s.messages.some((m) => isNoModelMessage(m.message)), JSON.stringify(s.messages));
    const view = await viewOf(s);
    assert.equal(view.modelLoaded, false);
    assert.equal(stateFromStats(view, 'starting'), 'no-model');
    assert.equal(statusText('no-model', view).text, '$(warning) quickfill: no model');
    assert.equal(await shutdown(s), 0);
  } catch (e) {
    s.proc.kill();
    throw new Error(`${String(e)}\n--- messages ---\n${JSON.stringify(s.messages)}\n--- server log ---\n${logTail(s)}`);
  }
});

// Applies an LSP incremental change to a local copy (single line, no newlines in `text`).
function insertAt(text: string, pos: Position, ins: string): string {
  const lines = text.split('\n');
  const l = lines[pos.line];
  lines[pos.line] = l.slice(0, pos.character) + ins + l.slice(pos.character);
  return lines.join('\n');
}

test('typing, then ghost text and completion items from the loaded model', { skip: skipNoModel }, async () => {
  const settings = settingsFor(model);
  const s = start(settings);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qf-vscode-'));
  try {
    await initialize(s, settings, dir);
    const status = await waitForModelLoad(s);
    assert.equal(status.modelLoaded, true, `model failed to load: ${JSON.stringify(status)}`);
    // The server reported the load as work-done progress ($/progress begin ... end).
    // It sends nothing on the token before the client has answered
    // window/workDoneProgress/create, which may come after the status answer.
    const kindsNow = () => s.progress.map((p: any) => p?.value?.kind);
    const progressUntil = Date.now() + 10000;
    while (!kindsNow().includes('end') && Date.now() < progressUntil) await sleep(20);
    const kinds = kindsNow();
    assert.ok(kinds.includes('begin') && kinds.includes('end'), `progress: ${JSON.stringify(s.progress)}`);
    const uri = pathToFileURL(path.join(dir, 'sample.py')).href;
    let text = 'import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n\n\ndef main():\n    \n';
    let version = 1;
    await s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version, text } });
    // Type "print(" one character at a time, as VS Code sends incremental changes.
    const pos: Position = { line: 9, character: 4 };
    for (const ch of 'print(') {
      text = insertAt(text, pos, ch);
      version += 1;
      await s.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { ...pos }, end: { ...pos } }, rangeLength: 0, text: ch }],
      });
      pos.character += 1;
    }
    // Ghost text, invoked explicitly (Alt+\ in VS Code) as the provider sends it.
    const inlineRaw = await s.conn.sendRequest(InlineCompletionMethod, inlineCompletionParams(uri, pos, 0));
    const ghosts = inlineItems(inlineRaw, pos);
    assert.ok(ghosts.length > 0, `inlineCompletion returned no items: ${JSON.stringify(inlineRaw)}`);
    for (const g of ghosts) {
      assert.ok(g.insertText.length > 0);
      assert.ok(usableAsGhost(g, pos), `range ${JSON.stringify(g.range)} must contain the cursor`);
    }
    // The suggestion list (and the fallback path of the provider).
    const listRaw = await s.conn.sendRequest(CompletionMethod, completionParams(uri, pos, true));
    const items = completionItems(listRaw, pos);
    assert.ok(items.length > 0, `completion returned no items: ${JSON.stringify(listRaw)}`);
    for (const it of (listRaw as any).items ?? listRaw) {
      assert.ok(it.textEdit, 'items carry a textEdit');
      assert.equal(it.textEdit.range.end.line, pos.line);
    }
    // The status bar's latency comes from quickfill/stats.
    const statsRaw: any = await s.conn.sendRequest(StatsMethod, {});
    const stats = parseStats(statsRaw, await s.conn.sendRequest(StatusMethod, {}));
    assert.equal(stats.modelLoaded, true);
    assert.ok(statsRaw.answered >= 2, `answered requests counted: ${JSON.stringify(statsRaw)}`);
    assert.ok(stats.lastLatencyMs !== undefined, `no last latency in ${JSON.stringify(statsRaw)}`);
    assert.match(statusText('ready', stats).text, /quickfill \d+(\.\d)? ms/);
    // A settings change travels as workspace/didChangeConfiguration; the server keeps serving.
    await s.conn.sendNotification('workspace/didChangeConfiguration',
      didChangeConfigurationParams(settingsFor(model, { 'completion.autoDeadlineMs': 50000 })));
    const again = inlineItems(await s.conn.sendRequest(InlineCompletionMethod, inlineCompletionParams(uri, pos, 0)), pos);
    assert.ok(again.length > 0, 'still answers after a configuration change');
    assert.ok(!s.messages.some((m) => isNoModelMessage(m.message)), 'no "no model" message with a model loaded');
    assert.equal(await shutdown(s), 0);
  } catch (e) {
    s.proc.kill();
    throw new Error(`${String(e)}\n--- server log ---\n${logTail(s)}`);
  }
});
