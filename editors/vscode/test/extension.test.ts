// Runs the real extension (src/extension.ts) with the real vscode-languageclient
// against the real quickfill binary, with `vscode` replaced by the test double
// in vscode_double.ts: activation starts the server with the configured
// settings, the client sends didOpen/didChange for a document the test opens
// and types into, the extension's inline-completion provider returns ghost
// text from the server, the status bar shows the model state and the last
// latency, and the commands (showStats, disable, enable, restart) and settings
// changes act on the server.
//
// Environment as in server.test.ts: QUICKFILL_BIN, QUICKFILL_MODEL.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscodeDouble from './vscode_double';

const bin = process.env.QUICKFILL_BIN ?? '';
const model = process.env.QUICKFILL_MODEL ?? '';
const haveBin = bin !== '' && fs.existsSync(bin);
const haveModel = model !== '' && fs.existsSync(model);
const WAIT_MS = Number(process.env.QUICKFILL_TEST_WAIT_MS ?? 300000);  // safety net only

// `require('vscode')` from the extension and from vscode-languageclient gets the double.
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Module = require('node:module');
const vscodeModule = vscodeDouble.moduleObject(vscodeDouble as unknown as Record<string, unknown>);
const originalLoad = Module._load;
Module._load = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return vscodeModule;
  return originalLoad.call(this, request, ...rest);
};

const { recorded, TextDocument, Uri, Position, openDocument, commands, workspace } = vscodeDouble;

function sleep(ms: number) { return new Promise((r) => setTimeout(r, ms)); }

async function waitFor<T>(what: string, probe: () => T | undefined | false): Promise<T> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function log(): string {
  return recorded.outputChannels.map((c) => `--- ${c.name} ---\n${c.lines.slice(-60).join('\n')}`).join('\n');
}

test('the extension end to end: activation, ghost text, status bar, commands, settings',
  { skip: !haveBin ? 'QUICKFILL_BIN is not set to an existing quickfill binary'
               : !haveModel ? 'no model: set QUICKFILL_MODEL to a GGUF file' : false },
  async () => {
    const s = recorded.settings;
    s.set('quickfill.serverPath', bin);
    s.set('quickfill.modelPath', model);
    s.set('quickfill.logLevel', 'debug');
    s.set('quickfill.completion.autoDeadlineMs', 60000);
    s.set('quickfill.completion.explicitDeadlineMs', 60000);
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const ext = require('../src/extension');
    const context = { subscriptions: [] as { dispose(): unknown }[] };
    try {
      await ext.activate(context);
      const status = recorded.statusBarItems[0];
      assert.ok(status, 'a status-bar item');
      assert.equal(status.command, 'quickfill.showLog');
      for (const id of ['quickfill.restart', 'quickfill.enable', 'quickfill.disable', 'quickfill.toggle',
                        'quickfill.showLog', 'quickfill.showStats', 'quickfill.showDashboard', 'quickfill.explainCompletion',
                        'quickfill.doctor',
                        'quickfill.nextEdit', 'quickfill.jumpToNextEdit', 'quickfill.acceptNextEdit',
                        'quickfill.didAcceptInline']) {
        assert.ok(recorded.commands.has(id), `command ${id} registered`);
      }
      assert.equal(recorded.inlineProviders.length, 1, 'one inline-completion provider');
      // The model loads in the background; the status bar follows quickfill/status.
      await waitFor('the ready status', () => status.text.startsWith('$(sparkle) quickfill'));
      assert.match(String(status.tooltip), /Model: /);

      // Open a document and type into it; the client sends didOpen and didChange.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qf-ext-'));
      const doc = new TextDocument(Uri.file(path.join(dir, 'sample.py')), 'python',
        'import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n\n\ndef main():\n    \n');
      openDocument(doc);
      let pos = new Position(9, 4);
      for (const ch of 'print(') {
        doc.insert(pos, ch);
        pos = pos.translate(0, 1);
      }
      const provider = recorded.inlineProviders[0].provider;
      const token = new vscodeDouble.CancellationTokenSource().token;
      const items = await provider.provideInlineCompletionItems(doc, pos,
        { triggerKind: vscodeDouble.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined }, token);
      assert.ok(Array.isArray(items) && items.length > 0, `ghost text items: ${JSON.stringify(items)}`);
      for (const it of items) {
        assert.ok(it instanceof vscodeDouble.InlineCompletionItem);
        assert.equal(typeof it.insertText, 'string');
        assert.ok(it.insertText.length > 0);
        assert.ok(it.range?.contains(pos), 'the item range contains the cursor');
      }
      // The first item is reported shown; its command (run by VS Code on acceptance) reports it accepted.
      const accept = items[0].command;
      assert.equal(accept?.command, 'quickfill.didAcceptInline');
      assert.equal(accept.arguments[1], items[0].insertText.length);
      await commands.executeCommand(accept.command, ...accept.arguments);
      // Typing on while a request runs: VS Code cancels it; the provider gives up quietly.
      const cts = new vscodeDouble.CancellationTokenSource();
      const pending = provider.provideInlineCompletionItems(doc, pos, { triggerKind: 1 }, cts.token);
      cts.cancel();
      const cancelled = await pending;
      assert.ok(cancelled === undefined || Array.isArray(cancelled), 'a cancelled request answers nothing or items');
      assert.ok(!log().includes('inline completion failed'), 'cancellation is not reported as a failure');
      // The status bar picks up the latency of that completion (stats refresh after ~1 s).
      await waitFor('a latency in the status bar', () => /quickfill \d+(\.\d)? ms$/.test(status.text));

      // The suggestion list is off by default: the client's completion provider answers nothing.
      const cp = recorded.completionProviders[0]?.provider;
      assert.ok(cp, 'the language client registered a completion provider');
      const list = await cp.provideCompletionItems(doc, pos, { triggerKind: 0 }, token);
      assert.equal(list, undefined, 'quickfill.suggest.enable is false');
      await workspace.getConfiguration('quickfill').update('suggest.enable', true);
      const list2 = await cp.provideCompletionItems(doc, pos, { triggerKind: 0 }, token);
      const listItems = Array.isArray(list2) ? list2 : list2?.items;
      assert.ok(Array.isArray(listItems) && listItems.length > 0, 'with quickfill.suggest.enable the list has the server items');
      assert.ok(listItems.every((it: any) => typeof it.insertText === 'string' || typeof it.textEdit?.newText === 'string'
        || (it.range && typeof it.label === 'string')), `list items carry their text: ${JSON.stringify(listItems)}`);

      // explainCompletion: quickfill/explainCompletion at the cursor, shown in a read-only document.
      vscodeDouble.window.activeTextEditor = { document: doc, selection: { active: pos } };
      await commands.executeCommand('quickfill.explainCompletion');
      const shown = recorded.shownDocuments.at(-1);
      assert.ok(shown, 'the explanation is shown');
      assert.equal(shown.uri.scheme, 'quickfill-explain', 'in a document of the read-only quickfill-explain scheme');
      const explained = shown.getText();
      assert.match(explained, /^quickfill prompt: \S+ format, \d+ tokens in \d+ parts\n/);
      assert.match(explained, new RegExp(`\\nprefix +\\d+  ${doc.uri.toString().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:\\d+)?\\n`));
      assert.ok(explained.includes('----- prompt -----\n'), explained);
      assert.ok(explained.includes('def read_lines(path):\n    with open(path) as f:\n'), explained);
      assert.ok(explained.includes('    print(\n----- end of prompt -----'), `the prompt ends at the cursor: ${explained}`);
      vscodeDouble.window.activeTextEditor = undefined;

      // showStats writes quickfill/status and quickfill/stats to the output channel.
      await commands.executeCommand('quickfill.showStats');
      assert.match(log(), /"modelLoaded": true/);
      const dump = JSON.parse(recorded.outputChannels.flatMap((c: { lines: string[] }) => c.lines).filter((l: string) => l.includes('"acceptance"')).at(-1) ?? '{}');
      const inlineCounts = dump.stats.acceptance.bySource.inline.explicit;
      assert.ok(inlineCounts.shown >= 1 && inlineCounts.accepted === 1, `acceptance: ${JSON.stringify(dump.stats.acceptance)}`);
      assert.equal(inlineCounts.acceptedChars, items[0].insertText.length);
      assert.match(log(), /"answered": \d+/);
      // The completion sources: the one implicit local source, with its meter.
      assert.match(log(), /Completion sources:\n  local \(local, ok\): \d+ requests?, 0 errors, \d+\+\d+ tokens/);
      assert.equal(dump.stats.sources[0].name, 'local');
      assert.ok(dump.stats.sources[0].requests >= 1, JSON.stringify(dump.stats.sources));
      assert.equal(dump.status.sources[0].state, 'ok');

      // A private file (the built-in list: .env) is never sent: no didOpen, no ghost text, no explanation.
      const env = new TextDocument(Uri.file(path.join(dir, '.env')), 'dotenv', 'API_KEY=sk-live-VSCODESECRET\n');
      openDocument(env);
      assert.equal(await provider.provideInlineCompletionItems(env, new Position(0, 8),
        { triggerKind: vscodeDouble.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined }, token),
      undefined, 'no ghost text in a .env');
      await commands.executeCommand('quickfill.showStats');
      const dump2 = JSON.parse(recorded.outputChannels.flatMap((c: { lines: string[] }) => c.lines)
        .filter((l: string) => l.includes('"acceptance"')).at(-1) ?? '{}');
      assert.equal(dump2.status.openDocuments, 1, `the server holds only sample.py: ${JSON.stringify(dump2.status)}`);
      assert.ok(!log().includes('VSCODESECRET'));

      // showDashboard: the server's quickfill/report page in a webview with scripts off; run again, the
      // same panel is revealed with a fresh page.
      await commands.executeCommand('quickfill.showDashboard');
      assert.equal(recorded.webviewPanels.length, 1, 'one dashboard panel');
      const panel = recorded.webviewPanels[0];
      assert.equal(panel.viewType, 'quickfill.dashboard');
      assert.equal((panel.options as { enableScripts: boolean }).enableScripts, false);
      assert.ok(panel.webview.html.startsWith('<!DOCTYPE html>'), panel.webview.html.slice(0, 80));
      for (const id of ['plot-slo-burn', 'plot-percentiles', 'hist-inline-explicit-totalMs'])
        assert.ok(panel.webview.html.includes(`<svg id="${id}"`), `the page has the ${id} plot`);
      await commands.executeCommand('quickfill.showDashboard');
      assert.equal(recorded.webviewPanels.length, 1, 'still one panel');
      assert.equal(panel.revealed, 1);

      // doctor: the real `quickfill doctor` report in its own output channel.
      await commands.executeCommand('quickfill.doctor');
      const doctor = recorded.outputChannels.find((c: { name: string }) => c.name === 'quickfill doctor');
      assert.ok(doctor, 'a quickfill doctor output channel');
      const report = doctor.lines.join('\n');
      assert.match(report, /^quickfill doctor/);
      assert.match(report, /kernel level/);
      assert.match(report, /problem\(s\)/);

      // Disable stops the server; the status bar says so; no ghost text.
      await commands.executeCommand('quickfill.disable');
      await waitFor('the disabled status', () => status.text === '$(circle-slash) quickfill');
      assert.equal(await provider.provideInlineCompletionItems(doc, pos, { triggerKind: 0 }, token), undefined);
      // Enable starts it again.
      await commands.executeCommand('quickfill.enable');
      await waitFor('ready after enable', () => status.text.startsWith('$(sparkle) quickfill'));

      // A model setting that points nowhere goes to the running server, which then has no model.
      await workspace.getConfiguration('quickfill').update('modelPath', path.join(dir, 'missing.gguf'));
      await waitFor('the no-model status', () => status.text === '$(warning) quickfill: no model');
      assert.match(String(status.tooltip), /none loaded/);
      // Back to the model; restart keeps working.
      await workspace.getConfiguration('quickfill').update('modelPath', model);
      await waitFor('ready with the model again', () => status.text.startsWith('$(sparkle) quickfill'));
      await commands.executeCommand('quickfill.restart');
      await waitFor('ready after restart', () => status.text.startsWith('$(sparkle) quickfill'));
      openDocument(doc);  // VS Code keeps the document open across the restart
      const again = await provider.provideInlineCompletionItems(doc, pos, { triggerKind: 0 }, token);
      assert.ok(Array.isArray(again) && again.length > 0, 'ghost text after restart');
      assert.equal(recorded.messages.filter((m) => m.kind === 'error').length, 0,
        `no error messages: ${JSON.stringify(recorded.messages)}`);
    } catch (e) {
      throw new Error(`${String(e)}\n${log()}`);
    } finally {
      await ext.deactivate();
      for (const d of context.subscriptions) d.dispose();
    }
  });
