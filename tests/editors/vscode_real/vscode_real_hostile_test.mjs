// editors.vscode-real-hostile: a hostile repository opened in a real VS Code.
//
// The workspace is tests/security/hostile_repo with its places filled in: its
// .vscode/settings.json sets quickfill.server with a remote source on a
// loopback port where a listening socket records every connection, an API
// key from the environment, an audit log on a file of the user's and a
// model planted in the repository, and also tries the machine-scoped
// quickfill.serverPath, modelPath and logFile. code-server (with the packaged
// extension, as in vscode_real_test.mjs) opens it twice: in Restricted Mode
// (workspace trust on, the folder not trusted), where VS Code must not give
// the extension the workspace's quickfill.server at all, and trusted, where
// the extension must drop its privileged keys and still send the others
// (completion.maxTokensExplicit: 8 reaches the server). Both times the
// server runs from the user's serverPath with the user's model, nothing
// connects to the repository's endpoint and the user's file is untouched.
// What the server was sent is read from the extension's JSON-RPC trace
// (quickfill.trace.server: verbose, in VS Code's logs).
//
// Environment (tests/editors/run_editor_test.sh): QUICKFILL_BIN,
// QUICKFILL_MODEL, QUICKFILL_TEST_WORK, QUICKFILL_VSIX, QUICKFILL_SOURCE_DIR.
// Exit status: 0 pass, 1 fail.
import fs from 'node:fs';
import path from 'node:path';
import { createHarness, descendants, need, sleep } from './harness.mjs';

const bin = need('QUICKFILL_BIN');
const model = need('QUICKFILL_MODEL');
const work = need('QUICKFILL_TEST_WORK');
const vsix = need('QUICKFILL_VSIX');
const sourceDir = need('QUICKFILL_SOURCE_DIR');

let browser;
let page;
const { tmp, owned, secs, log, step, waitFor, codeServerSetup, installVsix, startCodeServer, launchChromium, pass } =
  createHarness({
    tmpPrefix: 'qf-vscode-hostile-', work, logsDir: 'logs-hostile',
    logFiles: ['quickfill-untrusted.log', 'quickfill-trusted.log', 'code-server.log', 'install.log', 'browser-console.log'],
    failureScreenshot: 'vscode-hostile-failure.png', watchdogS: 600, browser: () => browser, page: () => page,
  });

// ----------------------------------------------------------------- setup --
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const workspace = path.join(tmp, 'repo');
const home = path.join(tmp, 'home');
const userFile = path.join(home, '.bashrc');
const userText = "# the user's shell startup file\nexport PATH=$HOME/bin:$PATH\n";

// A listening socket on the loopback that records each connection.
const net = await import('node:net');
const connections = [];
const recorder = net.createServer((s) => { connections.push(Date.now()); s.destroy(); });
await new Promise((r) => recorder.listen(0, '127.0.0.1', r));
const port = recorder.address().port;

for (const d of [userData, extensions, home, path.join(userData, 'User'), path.join(userData, 'Machine')]) {
  fs.mkdirSync(d, { recursive: true });
}
fs.writeFileSync(userFile, userText);
fs.cpSync(path.join(sourceDir, 'tests', 'security', 'hostile_repo'), workspace, { recursive: true });
fs.copyFileSync(model, path.join(workspace, 'models', 'planted.gguf'));
for (const f of ['.vscode/settings.json', '.dir-locals.el', '.nvim.lua']) {
  const p = path.join(workspace, f);
  fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replaceAll('@PORT@', String(port))
    .replaceAll('@USER_FILE@', userFile).replaceAll('@REPO@', workspace));
}

function userSettings(trust) {
  return {
    'security.workspace.trust.enabled': trust,
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.banner': 'never',
    'security.workspace.trust.untrustedFiles': 'open',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
    'quickfill.nextEdit.enable': false,
    'quickfill.trace.server': 'verbose',
  };
}

const cs = codeServerSetup(home, userData, extensions, { QF_HOSTILE_SECRET: 's3cr3t-of-the-user', QUICKFILL_NO_DAEMON: '1' });
const { env, commonArgs } = cs;

log(`code-server under node ${process.version}; recorder on 127.0.0.1:${port}`);

await step('install the .vsix into the fresh profile', 180000, () => installVsix(cs, vsix));

await step('launch headless Chromium', 60000, async () => { browser = await launchChromium(); });

// Every file under dir (VS Code's logs), recursively.
function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile()).map((d) => path.join(d.parentPath ?? d.path, d.name));
}

// What the extension sent the server, from its JSON-RPC trace (the output
// channel's log under <user-data>/logs): the blocks of the "Sending request",
// "Sending notification" and "Sending response" entries (the server's answers,
// such as quickfill/status with its "sources", are left out).
function traceText() {
  const text = filesUnder(path.join(userData, 'logs')).filter((f) => /quickfill/i.test(path.basename(f)))
    .map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  return text.split(/^(?=\[Trace - )/m).filter((b) => /^\[Trace - [^\]]*\] Sending /.test(b)).join('');
}

async function openWorkspace(mode) {
  const trusted = mode === 'trusted';
  fs.rmSync(path.join(userData, 'logs'), { recursive: true, force: true });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(userSettings(!trusted), null, 2));
  // The user's own machine-scoped settings (code-server reads them as Remote settings).
  const serverLog = path.join(tmp, `quickfill-${mode}.log`);
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({
    'quickfill.serverPath': bin,
    'quickfill.modelPath': model,
    'quickfill.logFile': serverLog,
  }, null, 2));
  const args = [...commonArgs, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry',
                '--disable-update-check', '--disable-getting-started-override', '--ignore-last-opened',
                '--idle-timeout-seconds', '300'];
  if (trusted) args.push('--disable-workspace-trust');
  args.push(workspace);
  const url = await step(`${mode}: start code-server`, 120000, () => startCodeServer(env, args));
  page = await browser.newPage();
  page.setDefaultTimeout(60000);
  const consoleLog = fs.openSync(path.join(tmp, 'browser-console.log'), 'a');
  page.on('console', (m) => { try { fs.writeSync(consoleLog, `[${secs()} s] ${mode} ${m.type()}: ${m.text()}\n`); } catch { /* closed */ } });
  await step(`${mode}: open the workbench`, 120000, async () => {
    await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: 'domcontentloaded', timeout: 90000 });
    await waitFor(() => !!document.querySelector('.monaco-workbench .part.editor'), 90000, 'the workbench');
  });
  if (!trusted) {
    await step('untrusted: the window is in Restricted Mode', 60000, async () => {
      await waitFor(() => /Restricted Mode/.test(document.querySelector('.part.statusbar')?.textContent ?? '') ||
                          !!document.querySelector('.part.statusbar [id*="workspaceTrust"], .part.statusbar [id*="restricted"]'),
                    55000, "the status bar's Restricted Mode item");
    });
  }
  await step(`${mode}: the server is ready (the user's model loaded)`, 150000, async () => {
    await waitFor(() => {
      for (const el of document.querySelectorAll('.part.statusbar .statusbar-item')) {
        if (/quickfill/.test(el.textContent ?? '') && el.querySelector('.codicon-sparkle')) return el.textContent.trim();
      }
      return null;
    }, 145000, "quickfill's status-bar item in its ready state");
  });
  await step(`${mode}: the server was started from the user's settings, not the repository's`, 60000, async () => {
    const deadline = Date.now() + 55000;
    let text = '';
    while (Date.now() < deadline) {
      text = fs.existsSync(serverLog) ? fs.readFileSync(serverLog, 'utf8') : '';
      if (/model loaded/.test(text)) break;
      await sleep(500);
    }
    if (!text.includes(`model loaded from ${model}`)) throw new Error(`the server's log does not say it loaded ${model}:\n${text.slice(-3000)}`);
    if (text.includes('planted')) throw new Error(`the planted model appears in the server's log:\n${text.slice(-3000)}`);
    if (fs.readFileSync(userFile, 'utf8') !== userText) throw new Error("the user's file was changed");
  });
  await step(`${mode}: what the extension sent the server`, 60000, async () => {
    // The initialize request's initializationOptions, in the trace.
    const deadline = Date.now() + 55000;
    let trace = '';
    while (Date.now() < deadline) {
      trace = traceText();
      if (/initializationOptions/.test(trace)) break;
      await sleep(500);
    }
    if (!/initializationOptions/.test(trace)) throw new Error(`no initialize request in the extension's trace (${filesUnder(path.join(userData, 'logs')).join(', ')})`);
    for (const bad of ['"sources"', '"apiKeyEnv"', '"audit"', '"includeCode"', '.bashrc', 'planted', String(port)]) {
      if (trace.includes(bad)) throw new Error(`the trace holds ${bad}: the repository's value was sent`);
    }
    const sent = /"maxTokensExplicit":\s*8/.test(trace);
    if (trusted && !sent) throw new Error("trusted: the workspace's completion.maxTokensExplicit did not reach the server");
    if (!trusted && sent) throw new Error("untrusted: the workspace's quickfill.server reached the server");
    log(`${mode}: the workspace's non-privileged completion.maxTokensExplicit ${sent ? 'was' : 'was not'} sent; nothing privileged was`);
  });
  await page.screenshot({ path: path.join(work, `vscode-hostile-${mode}.png`) });
  await page.close();
  page = undefined;
  for (const p of owned.splice(0)) {
    for (const pid of [p.pid, ...descendants(p.pid)]) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }
  await sleep(500);
}

await openWorkspace('untrusted');
await openWorkspace('trusted');

await step('nothing connected to the repository\'s endpoint', 5000, async () => {
  if (connections.length > 0) throw new Error(`${connections.length} connection(s) reached 127.0.0.1:${port}`);
});
recorder.close();
await pass();
