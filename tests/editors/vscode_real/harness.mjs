// What the real-VS-Code tests (vscode_real_test.mjs, vscode_real_hostile_test.mjs)
// share: the environment they need, a temporary folder for code-server's
// profile, named steps with timeouts whose failure ends the test (with a
// screenshot), code-server and Chromium started in it, and every process the
// test started killed, and the logs kept, on every way out.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const codeServer = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const chromium = process.env.QUICKFILL_CHROMIUM || '/usr/bin/chromium';

// An environment variable set by tests/editors/run_editor_test.sh (exit 1 without it).
export function need(name) {
  const v = process.env[name];
  if (!v) { console.error(`FAIL: ${name} is not set (run through tests/editors/run_editor_test.sh)`); process.exit(1); }
  return v;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s: ${what}`)), ms); }),
  ]);
}

// Every descendant of pid (from /proc), so the extension host and quickfill go too.
export function descendants(pid) {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat;
    try { stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(d));
  }
  const out = [];
  const walk = (p) => { for (const c of children.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}

// The test's harness. opts: tmpPrefix (of the temporary folder), work
// (QUICKFILL_TEST_WORK: screenshots and kept logs), logsDir (under work),
// logFiles (of the temporary folder, kept with VS Code's logs),
// failureScreenshot (under work), watchdogS (well inside CTest's TIMEOUT of
// 900 s, so the cleanup runs before CTest kills the test), and browser() /
// page() giving the test's current Chromium and page (either undefined).
export function createHarness({ tmpPrefix, work, logsDir, logFiles, failureScreenshot, watchdogS, browser, page }) {
  const t0 = Date.now();
  const secs = () => ((Date.now() - t0) / 1000).toFixed(1);
  const log = (s) => console.log(`[${secs()} s] ${s}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  const owned = [];  // child processes to kill on every exit path (each leads its own process group)

  function killAll() {
    const pids = [];
    for (const p of owned) if (p.pid) pids.push(p.pid, ...descendants(p.pid));
    const cp = browser()?.process();
    if (cp?.pid) pids.push(cp.pid, ...descendants(cp.pid));
    for (const p of owned) if (p.pid) { try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }
    if (cp?.pid) { try { process.kill(-cp.pid, 'SIGKILL'); } catch { /* gone or not a group */ } }
    for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  }

  function keepLogs() {
    // The server's log, code-server's output and VS Code's own logs (extension host, window).
    const dest = path.join(work, logsDir);
    fs.rmSync(dest, { recursive: true, force: true });
    fs.mkdirSync(dest, { recursive: true });
    for (const f of logFiles) {
      if (fs.existsSync(path.join(tmp, f))) fs.copyFileSync(path.join(tmp, f), path.join(dest, f));
    }
    const vsLogs = path.join(tmp, 'user-data', 'logs');
    if (fs.existsSync(vsLogs)) fs.cpSync(vsLogs, path.join(dest, 'vscode'), { recursive: true });
    console.log(`logs kept in ${dest}`);
  }

  let cleaned = false;
  function cleanup() {
    if (cleaned) return;
    cleaned = true;
    killAll();
    try { keepLogs(); } catch (e) { console.error(`could not keep the logs: ${e}`); }
    fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  }

  async function fail(message) {
    console.error(`FAIL: ${message}`);
    if (page()) {
      const shot = path.join(work, failureScreenshot);
      try {
        await withTimeout(page().screenshot({ path: shot }), 15000, 'screenshot');
        console.error(`screenshot: ${shot}`);
      } catch { /* the page may be gone */ }
    }
    cleanup();
    process.exit(1);
  }

  process.on('exit', cleanup);
  const watchdog = setTimeout(() => { void fail(`the whole test took more than ${watchdogS} s`); }, watchdogS * 1000);
  watchdog.unref();
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => { console.error(`FAIL: killed by ${sig}`); cleanup(); process.exit(1); });
  }

  // One named step: its failure (or timeout) ends the test with the step's name.
  async function step(name, ms, fn) {
    const start = Date.now();
    try {
      const r = await withTimeout(Promise.resolve().then(fn), ms, name);
      log(`ok: ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
      return r;
    } catch (e) {
      await fail(`step '${name}': ${e?.message ?? e}`);
    }
  }

  // Polls fn() in the page until it returns a truthy value.
  async function waitFor(fn, ms, what, arg) {
    try {
      const h = await page().waitForFunction(fn, { timeout: ms, polling: 200 }, arg);
      return await h.jsonValue();
    } catch (e) {
      throw new Error(`${what} did not appear within ${ms / 1000} s (${e?.message ?? e})`);
    }
  }

  // code-server's environment (its config and state under `home`, XDG, all
  // in the temporary folder; extra added) and the arguments of every
  // code-server command (config, profile and extensions folders).
  function codeServerSetup(home, userData, extensions, extra = {}) {
    const env = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_RUNTIME_DIR: tmp,
      ...extra,
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    };
    delete env.VSCODE_IPC_HOOK_CLI;
    fs.writeFileSync(path.join(tmp, 'config.yaml'), 'auth: none\n');
    return { env, commonArgs: ['--config', path.join(tmp, 'config.yaml'), '--user-data-dir', userData, '--extensions-dir', extensions] };
  }

  // `code-server --install-extension vsix` into the profile (its output in install.log).
  function installVsix({ env, commonArgs }, vsix) {
    const r = spawnSync(process.execPath, [codeServer, ...commonArgs, '--install-extension', vsix, '--force'],
                        { env, encoding: 'utf8', timeout: 170000 });
    fs.writeFileSync(path.join(tmp, 'install.log'), `${r.stdout}\n${r.stderr}`);
    if (r.status !== 0) throw new Error(`code-server --install-extension exited ${r.status ?? r.signal}: ${r.stdout}${r.stderr}`);
  }

  // Starts code-server with args (after the entry point) on 127.0.0.1:0, its
  // output appended to code-server.log; resolves to its URL once it listens
  // (the kernel picks the free port and code-server prints it).
  function startCodeServer(env, args) {
    return new Promise((resolve, reject) => {
      const out = fs.openSync(path.join(tmp, 'code-server.log'), 'a');
      const cs = spawn(process.execPath, [codeServer, ...args], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      owned.push(cs);
      let text = '';
      const onData = (b) => {
        fs.writeSync(out, b);
        text += b.toString();
        const m = text.match(/HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//);
        if (m) resolve(m[1]);
      };
      cs.stdout.on('data', onData);
      cs.stderr.on('data', onData);
      cs.on('exit', (code, sig) => reject(new Error(`code-server exited (${code ?? sig}) before listening: ${text.slice(-2000)}`)));
    });
  }

  // Headless Chromium with its profile in the temporary folder.
  function launchChromium() {
    return puppeteer.launch({
      executablePath: chromium,
      headless: true,
      pipe: true,  // Chromium talks over its stdio: it ends when this process does
      userDataDir: path.join(tmp, 'chromium-profile'),
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,900'],
      defaultViewport: { width: 1400, height: 900 },
    });
  }

  // The end of a passing test: Chromium closed, everything cleaned up, exit 0.
  async function pass() {
    try { await withTimeout(browser().close(), 10000, 'closing Chromium'); } catch { /* killed by the cleanup */ }
    cleanup();
    console.log(`PASS (${secs()} s)`);
    process.exit(0);
  }

  return { tmp, owned, secs, log, step, waitFor, fail, cleanup, codeServerSetup, installVsix, startCodeServer,
           launchChromium, pass };
}
