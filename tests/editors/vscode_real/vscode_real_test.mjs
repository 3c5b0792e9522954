// editors.vscode-real: the packaged extension inside a real VS Code.
//
// code-server (VS Code for the browser, from npm) gets a fresh profile in a
// temporary folder, the extension's .vsix is installed into it with
// `code-server --install-extension`, and headless Chromium (Debian's, driven
// by puppeteer-core) opens a workspace with one Python file. The test then
// does what a person does: waits for the extension's status-bar item to say
// the model is loaded, types at the end of the file through the keyboard,
// waits for quickfill's ghost text in the editor, takes a screenshot, accepts
// it with Tab, saves, and checks the file on disk is the text before plus
// the ghost text it saw. Last it runs "quickfill: Show Dashboard" from the
// command palette and checks the webview shows the server's page.
//
// The server is the real binary with a real model (machine-scoped settings:
// in code-server they live in <user-data-dir>/Machine/settings.json, the
// Remote settings). Every step has a generous timeout whose message names
// the step; code-server, its children (extension host, quickfill) and
// Chromium are killed on every way out. Screenshots and, on failure, the logs
// go to QUICKFILL_TEST_WORK.
//
// Environment (set by tests/editors/run_editor_test.sh): QUICKFILL_BIN,
// QUICKFILL_MODEL, QUICKFILL_TEST_WORK, QUICKFILL_VSIX.
// Exit status: 0 pass, 1 fail.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { codeServer, createHarness, need, sleep } from './harness.mjs';

const bin = need('QUICKFILL_BIN');
const model = need('QUICKFILL_MODEL');
const work = need('QUICKFILL_TEST_WORK');
const vsix = need('QUICKFILL_VSIX');

let browser;
let page;
const { tmp, secs, log, step, waitFor, codeServerSetup, installVsix, startCodeServer, launchChromium, pass } =
  createHarness({
    tmpPrefix: 'qf-vscode-real-', work, logsDir: 'logs',
    logFiles: ['quickfill.log', 'code-server.log', 'install.log', 'browser-console.log'],
    failureScreenshot: 'vscode-real-failure.png', watchdogS: 480, browser: () => browser, page: () => page,
  });

// ----------------------------------------------------------------- setup --
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const workspace = path.join(tmp, 'workspace');
const home = path.join(tmp, 'home');
const sample = path.join(workspace, 'sample.py');
// The file ends inside a function body; the test types " a" after "return".
const original = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef sub(a, b):\n    return';
const typed = ' a';

for (const d of [userData, extensions, workspace, home, path.join(userData, 'User'), path.join(userData, 'Machine')]) {
  fs.mkdirSync(d, { recursive: true });
}
fs.writeFileSync(sample, original);
fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.editor.enablePreview': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'chat.disableAIFeatures': true,
  // Only quickfill's ghost text: no suggestion list that would take the Tab key.
  'editor.inlineSuggest.enabled': true,
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.suggestOnTriggerCharacters': false,
  'editor.wordBasedSuggestions': 'off',
  'files.autoSave': 'off',
  'quickfill.nextEdit.enable': false,
  // The JSON-RPC traffic goes to the quickfill output channel, which VS Code
  // also writes under <user-data-dir>/logs (kept in the test's folder).
  'quickfill.trace.server': 'verbose',
}, null, 2));
// Machine-scoped settings: in a remote window (code-server is one) VS Code
// reads them from the remote machine's settings, not from the User settings.
fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({
  'quickfill.serverPath': bin,
  'quickfill.modelPath': model,
  'quickfill.logFile': path.join(tmp, 'quickfill.log'),
}, null, 2));

// code-server keeps its config and state under HOME/XDG: all of them in the temp folder.
const cs = codeServerSetup(home, userData, extensions);
const { env, commonArgs } = cs;

log(`code-server ${codeServer} under node ${process.version}`);
log(`binary ${bin}, model ${model}`);

await step('install the .vsix into the fresh profile', 180000, async () => {
  installVsix(cs, vsix);
  const list = spawnSync(process.execPath, [codeServer, ...commonArgs, '--list-extensions', '--show-versions'],
                         { env, encoding: 'utf8', timeout: 120000 });
  if (!/^quickfill\.quickfill@/m.test(list.stdout)) throw new Error(`quickfill.quickfill is not listed: ${list.stdout}${list.stderr}`);
  log(`installed: ${list.stdout.trim()}`);
});

const url = await step('start code-server on a free port', 120000, () => startCodeServer(env, [
  ...commonArgs, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check',
  '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened',
  // Should this process die unannounced (SIGKILL), code-server ends by itself.
  '--idle-timeout-seconds', '300', workspace]));
log(`code-server at ${url}`);

await step('launch headless Chromium', 60000, async () => {
  browser = await launchChromium();
  page = await browser.newPage();
  page.setDefaultTimeout(60000);
  // The workbench's console (its own log lives in the browser's storage).
  const consoleLog = fs.openSync(path.join(tmp, 'browser-console.log'), 'a');
  page.on('console', (m) => { try { fs.writeSync(consoleLog, `[${secs()} s] ${m.type()}: ${m.text()}\n`); } catch { /* closed */ } });
  page.on('pageerror', (e) => { try { fs.writeSync(consoleLog, `[${secs()} s] pageerror: ${e}\n`); } catch { /* closed */ } });
});

await step('open the workbench', 120000, async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: 'domcontentloaded', timeout: 90000 });
  await waitFor(() => !!document.querySelector('.monaco-workbench .part.editor'), 90000, 'the workbench (.monaco-workbench)');
});

// The extension's status-bar item: its text is "<icon> quickfill[...]"; the
// sparkle icon is the ready state (model loaded, from quickfill/status).
const statusItem = () => {
  for (const el of document.querySelectorAll('.part.statusbar .statusbar-item')) {
    if (/quickfill/.test(el.textContent ?? '') || (el.id ?? '').startsWith('quickfill.')) {
      const icon = el.querySelector('.codicon');
      const cls = icon ? [...icon.classList].find((c) => c.startsWith('codicon-') && c !== 'codicon-modifier-spin') : '';
      return { id: el.id, text: (el.textContent ?? '').trim(), icon: cls ?? '', label: el.getAttribute('aria-label') ?? '' };
    }
  }
  return null;
};

await step("the extension's status-bar item appears", 90000, async () => {
  const item = await waitFor(statusItem, 85000, "quickfill's status-bar item");
  log(`status-bar item: ${JSON.stringify(item)}`);
});

await step('open sample.py through Quick Open', 60000, async () => {
  await page.click('.part.editor');
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.down('Control'); await page.keyboard.press('p'); await page.keyboard.up('Control');
    try {
      await waitFor(() => !!document.querySelector('.quick-input-widget:not([style*="display: none"]) input'), 10000, 'Quick Open');
      break;
    } catch (e) { if (attempt >= 2) throw e; }
  }
  await page.keyboard.type('sample.py', { delay: 20 });
  await waitFor(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')]
    .some((r) => /sample\.py/.test(r.textContent ?? '')), 20000, 'sample.py in the Quick Open list');
  await page.keyboard.press('Enter');
  await waitFor(() => [...document.querySelectorAll('.editor-group-container .tab')]
    .some((t) => /sample\.py/.test(t.textContent ?? '')) &&
    /def\s+sub/.test((document.querySelector('.editor-group-container .monaco-editor .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ')),
  30000, 'the editor of sample.py');
});

await step('the server is ready (model loaded)', 120000, async () => {
  try {
    const item = await waitFor(() => {
      for (const el of document.querySelectorAll('.part.statusbar .statusbar-item')) {
        if (/quickfill/.test(el.textContent ?? '') && el.querySelector('.codicon-sparkle')) return el.textContent.trim();
      }
      return null;
    }, 115000, "the status-bar item's ready state (sparkle icon)");
    log(`status-bar item ready: "${item}"`);
  } catch (e) {
    const item = await page.evaluate(statusItem).catch(() => null);
    throw new Error(`${e.message}; the item shows ${JSON.stringify(item)}`);
  }
});

// The ghost text in the editor's DOM: the part on the cursor's line
// (injected text, .ghost-text-decoration) and further lines (a view zone,
// .ghost-text .view-line). Monaco renders spaces as U+00A0.
const readGhost = () => {
  const ed = document.querySelector('.editor-group-container .monaco-editor.focused') ??
             document.querySelector('.editor-group-container .monaco-editor');
  if (!ed) return null;
  const norm = (s) => (s ?? '').replace(/\u00a0/g, ' ');
  const inline = [...ed.querySelectorAll('.view-lines .ghost-text-decoration')].map((e) => norm(e.textContent)).join('');
  const extra = [...ed.querySelectorAll('.ghost-text .view-line')].map((e) => norm(e.textContent));
  if (!inline && extra.length === 0) return null;
  return { inline, extra };
};

const ghostText = (g) => [g.inline, ...g.extra].join('\n');

let ghost = await step('type at the end of the file and see ghost text', 150000, async () => {
  await page.keyboard.down('Control'); await page.keyboard.press('End'); await page.keyboard.up('Control');
  // VS Code creates an editor's inline-suggestion controller when the window
  // is idle after the editor opened: keys typed before it exists ask nothing.
  await sleep(2000);
  // Attempts: type the characters; delete the last one and type it again;
  // ask explicitly (Alt+\, editor.action.inlineSuggest.trigger); retype again.
  const retype = async () => {
    await page.keyboard.press('Backspace'); await sleep(300); await page.keyboard.type(typed.slice(-1), { delay: 120 });
  };
  const attempts = [
    async () => { await page.keyboard.type(typed, { delay: 120 }); },
    retype,
    async () => { await page.keyboard.down('Alt'); await page.keyboard.press('Backslash'); await page.keyboard.up('Alt'); },
    retype,
  ];
  let last = null;
  for (let i = 0; i < attempts.length; i++) {
    await attempts[i]();
    try {
      const g = await waitFor((ev) => {
        const g = (0, eval)(ev)();
        return g && /\S/.test([g.inline, ...g.extra].join('')) ? g : null;
      }, 20000, `non-empty ghost text (attempt ${i + 1} of ${attempts.length})`, `(${readGhost.toString()})`);
      await sleep(500);  // let a refined item replace a first one, then read what is shown
      const now = await page.evaluate(readGhost);
      return now && /\S/.test(ghostText(now)) ? now : g;
    } catch (e) {
      last = e;
      const seen = await page.evaluate(readGhost).catch(() => null);
      log(`attempt ${i + 1}: no usable ghost text (${seen ? JSON.stringify(seen) : 'none shown'}); trying again`);
    }
  }
  throw last;
});
log(`ghost text seen: ${JSON.stringify(ghostText(ghost))}`);

await step('screenshot of the suggestion', 30000, async () => {
  await page.screenshot({ path: path.join(work, 'vscode-real-suggestion.png') });
  // The editor area alone, clipped from the page (an element screenshot scrolls it).
  const box = await (await page.$('.part.editor'))?.boundingBox();
  if (box) await page.screenshot({ path: path.join(work, 'vscode-real-suggestion-editor.png'), clip: box, captureBeyondViewport: false });
});

await step('accept with Tab and save', 60000, async () => {
  // What Tab accepts is what is shown right now (VS Code may have replaced the item since).
  const before = await page.evaluate(readGhost);
  if (!before || !/\S/.test(ghostText(before))) throw new Error(`the ghost text went away before Tab: ${JSON.stringify(before)}`);
  if (ghostText(before) !== ghostText(ghost)) log(`the ghost text changed to ${JSON.stringify(ghostText(before))}`);
  ghost = before;
  await page.keyboard.press('Tab');
  // Gone, or replaced by the next suggestion at the new cursor position.
  await waitFor(([ev, shown]) => {
    const g = (0, eval)(ev)();
    return !g || [g.inline, ...g.extra].join('\n') !== shown;
  }, 10000, 'the accepted ghost text to leave the editor after Tab', [`(${readGhost.toString()})`, ghostText(ghost)]);
  await page.keyboard.down('Control'); await page.keyboard.press('s'); await page.keyboard.up('Control');
  await waitFor(() => ![...document.querySelectorAll('.editor-group-container .tab')]
    .some((t) => /sample\.py/.test(t.textContent ?? '') && t.classList.contains('dirty')), 20000, 'the saved editor (no dirty tab)');
  await page.screenshot({ path: path.join(work, 'vscode-real-accepted.png') });
});

await step('the file on disk is the text before plus the ghost text', 10000, async () => {
  const got = fs.readFileSync(sample, 'utf8');
  const want = original + typed + ghostText(ghost);
  // Lines of a multi-line ghost text are compared without trailing blanks
  // (the view zone may not render them).
  const trimEnds = (s) => s.split('\n').map((l) => l.replace(/[ \t]+$/, '')).join('\n');
  if (got !== want && trimEnds(got) !== trimEnds(want)) {
    throw new Error(`sample.py on disk:\n${JSON.stringify(got)}\nexpected (before + typed + ghost text):\n${JSON.stringify(want)}`);
  }
  log(`sample.py now ends with ${JSON.stringify(got.slice(original.length - 10))}`);
});

await step('"quickfill: Show Dashboard" from the command palette', 90000, async () => {
  await page.keyboard.press('F1');
  await waitFor(() => !!document.querySelector('.quick-input-widget:not([style*="display: none"]) input'), 15000, 'the command palette');
  await page.keyboard.type('quickfill: Show Dashboard', { delay: 20 });
  await waitFor(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')]
    .some((r) => /quickfill: Show Dashboard/.test(r.textContent ?? '')), 20000, 'the command in the palette');
  await page.keyboard.press('Enter');
  await waitFor(() => [...document.querySelectorAll('.editor-group-container .tab')]
    .some((t) => /quickfill dashboard/.test(t.textContent ?? '')), 30000, "the dashboard's editor tab");
  // The page lives in the webview's nested iframes.
  const deadline = Date.now() + 40000;
  let h1 = null;
  while (!h1 && Date.now() < deadline) {
    for (const f of page.frames()) {
      try {
        h1 = await f.evaluate(() => document.querySelector('h1')?.textContent ?? null);
      } catch { h1 = null; }
      if (h1 && /quickfill dashboard/.test(h1)) break;
      h1 = null;
    }
    if (!h1) await sleep(500);
  }
  if (!h1) throw new Error('no frame of the webview shows the <h1>quickfill dashboard</h1> of quickfill/report within 40 s');
  await page.screenshot({ path: path.join(work, 'vscode-real-dashboard.png') });
});

log(`screenshots in ${work}: vscode-real-suggestion.png, vscode-real-suggestion-editor.png, vscode-real-accepted.png, vscode-real-dashboard.png`);
await pass();
