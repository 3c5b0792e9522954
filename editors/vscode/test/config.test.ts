// Unit tests of config.ts: settings -> command line, initializationOptions,
// didChangeConfiguration params, and what a change requires.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  readSettings, serverCommand, doctorCommand, serverSettings, initializationOptions, didChangeConfigurationParams,
  classifyChange, expandPath, mergeSettings, defaultSettings, whereToSet, serverObject, withoutPrivileged,
} from '../src/config';

function getter(values: Record<string, unknown>) {
  return (key: string) => values[key];
}

test('defaults when nothing is set', () => {
  const s = readSettings(getter({}));
  assert.deepEqual(s, defaultSettings);
  assert.deepEqual(serverCommand(s, {}, '/home/u'), { command: 'quickfill', args: ['--stdio', '--log-level', 'info'] });
  assert.deepEqual(initializationOptions(s, {}, '/home/u'), { quickfill: {} });
});

test('wrongly typed values fall back to defaults', () => {
  const s = readSettings(getter({ enable: 'yes', serverPath: 3, 'completion.autoDeadlineMs': -5,
                                  'completion.explicitDeadlineMs': 'x', server: [1, 2] }));
  assert.equal(s.enable, true);
  assert.equal(s.serverPath, 'quickfill');
  assert.equal(s.autoDeadlineMs, null);
  assert.equal(s.explicitDeadlineMs, null);
  assert.deepEqual(s.server, {});
});

test('paths expand ~ and ${env:NAME}', () => {
  assert.equal(expandPath('~/m/x.gguf', {}, '/home/u'), '/home/u/m/x.gguf');
  assert.equal(expandPath('${env:MODELS}/x.gguf', { MODELS: '/opt/models' }, '/h'), '/opt/models/x.gguf');
  assert.equal(expandPath('/a/~b', {}, '/h'), '/a/~b');
});

test('command line carries the model and the log options', () => {
  const s = readSettings(getter({ serverPath: '~/bin/quickfill', modelPath: '~/m.gguf', logLevel: 'debug',
                                  logFile: '/tmp/qf.log' }));
  assert.deepEqual(serverCommand(s, {}, '/home/u'), {
    command: '/home/u/bin/quickfill',
    args: ['--stdio', '--model', '/home/u/m.gguf', '--log-level', 'debug', '--log-file', '/tmp/qf.log'],
  });
  // The server takes no file path from the settings object (docs/security.md).
  assert.deepEqual(serverSettings(s, {}, '/home/u'), {});
});

test('server settings merge the free-form object under the dedicated ones', () => {
  const s = readSettings(getter({
    modelPath: '/m.gguf',
    'completion.autoDeadlineMs': 150,
    'completion.explicitDeadlineMs': 2000,
    server: { model: '/ignored.gguf', completion: { maxTokens: 32, autoDeadlineMs: 9 }, cache: { budgetMiB: 256 } },
  }));
  const expected = {
    completion: { maxTokens: 32, autoDeadlineMs: 150, explicitDeadlineMs: 2000 },
    cache: { budgetMiB: 256 },
  };
  assert.deepEqual(serverSettings(s, {}, '/'), expected);
  assert.deepEqual(initializationOptions(s, {}, '/'), { quickfill: expected });
  assert.deepEqual(didChangeConfigurationParams(s, {}, '/'), { settings: { quickfill: expected } });
});

test('mergeSettings does not modify its inputs', () => {
  const a = { x: { y: 1 } };
  const b = { x: { z: 2 } };
  assert.deepEqual(mergeSettings(a, b), { x: { y: 1, z: 2 } });
  assert.deepEqual(a, { x: { y: 1 } });
});

test('classifyChange: restart for the command line, notify for server settings', () => {
  const base = readSettings(getter({}));
  const w = (v: Record<string, unknown>) => readSettings(getter(v));
  assert.equal(classifyChange(base, w({})), 'none');
  assert.equal(classifyChange(base, w({ enable: false })), 'stop');
  assert.equal(classifyChange(w({ enable: false }), base), 'start');
  assert.equal(classifyChange(w({ enable: false }), w({ enable: false, modelPath: '/m' })), 'none');
  assert.equal(classifyChange(base, w({ serverPath: '/opt/quickfill' })), 'restart');
  assert.equal(classifyChange(base, w({ logLevel: 'debug' })), 'restart');
  assert.equal(classifyChange(base, w({ modelPath: '/m.gguf' })), 'restart');  // --model
  assert.equal(classifyChange(base, w({ 'completion.autoDeadlineMs': 100 })), 'notify');
  assert.equal(classifyChange(base, w({ server: { a: 1 } })), 'notify');
  assert.equal(classifyChange(base, w({ 'inline.enable': false })), 'none');
});

// package.json's contributes.configuration and readSettings describe the same settings.
// The extension folder: QUICKFILL_VSCODE_EXT when the tests are compiled
// elsewhere (tests/editors/run_editor_test.sh), else two levels above out/test/.
function contributed(): Record<string, { scope?: string; default?: unknown; description?: string }> {
  const dir = process.env.QUICKFILL_VSCODE_EXT || path.join(__dirname, '..', '..');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return pkg.contributes.configuration.properties;
}

const machineScoped = ['quickfill.serverPath', 'quickfill.modelPath', 'quickfill.logLevel', 'quickfill.logFile'];

test('package.json: the command line (executable, model, log options) is machine-scoped', () => {
  const props = contributed();
  for (const key of machineScoped) assert.equal(props[key]?.scope, 'machine', key);
  // The others may be set per workspace, and every setting says its scope.
  for (const [key, p] of Object.entries(props)) {
    if (!machineScoped.includes(key)) assert.equal(p.scope, 'window', key);
  }
});

test('package.json: an untrusted workspace cannot set the server object or the command line', () => {
  const dir = process.env.QUICKFILL_VSCODE_EXT || path.join(__dirname, '..', '..');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const u = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(u?.supported, 'limited');
  assert.deepEqual([...u.restrictedConfigurations].sort(), ['quickfill.server', ...machineScoped].sort());
});

test('privileged keys of quickfill.server come from the User settings only', () => {
  const hostile = {
    sources: [{ name: 'evil', kind: 'openai', url: 'http://203.0.113.9/v1', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' }],
    audit: { path: '/home/u/.bashrc', includeCode: true },
    'audit.path': '/home/u/.profile',
    completion: { draftModel: '/tmp/planted.gguf', maxTokens: 5 },
    model: 'planted.gguf',
    routes: { automatic: ['mine'] },
  };
  assert.deepEqual(withoutPrivileged(hostile), { completion: { maxTokens: 5 }, routes: { automatic: ['mine'] } });
  const user = { sources: [{ name: 'mine', kind: 'local', model: '/m/a.gguf' }], completion: { maxTokens: 9 } };
  const merged = serverObject({ defaultValue: {}, globalValue: user, workspaceFolderValue: hostile });
  assert.deepEqual(merged.sources, user.sources);
  assert.deepEqual(merged.completion, { maxTokens: 5 });
  assert.equal(merged.audit, undefined);
  assert.deepEqual(merged.routes, { automatic: ['mine'] });
  assert.equal(merged['audit.path'], undefined);
  assert.deepEqual(serverObject({ workspaceValue: hostile }).sources, undefined);
  assert.deepEqual(serverObject(undefined), {});
});

test('package.json contributes every setting readSettings reads, with the same defaults', () => {
  const read: string[] = [];
  const s = readSettings((key) => { read.push(key); return undefined; });
  const props = contributed();
  for (const key of read) assert.ok(props[`quickfill.${key}`], `quickfill.${key} is not in package.json`);
  const defaults: Record<string, unknown> = {
    enable: s.enable, serverPath: s.serverPath, modelPath: s.modelPath, logLevel: s.logLevel, logFile: s.logFile,
    'inline.enable': s.inlineEnable, 'suggest.enable': s.suggestEnable,
    'completion.autoDeadlineMs': s.autoDeadlineMs, 'completion.explicitDeadlineMs': s.explicitDeadlineMs, server: s.server,
  };
  for (const [key, v] of Object.entries(defaults)) assert.deepEqual(props[`quickfill.${key}`].default, v, key);
});

test('the model comes from modelPath only, on the command line; clearing it leaves it out', () => {
  const viaServer = readSettings(getter({ server: { model: '/workspace-chosen.gguf', completion: { maxTokens: 8 } } }));
  assert.deepEqual(serverSettings(viaServer, {}, '/'), { completion: { maxTokens: 8 } });
  assert.deepEqual(viaServer.server, { model: '/workspace-chosen.gguf', completion: { maxTokens: 8 } });  // not modified
  const set = readSettings(getter({ modelPath: '/m.gguf' }));
  const cleared = readSettings(getter({ modelPath: '' }));
  assert.deepEqual(serverSettings(set, {}, '/'), {});
  assert.deepEqual(serverCommand(set, {}, '/').args.slice(0, 3), ['--stdio', '--model', '/m.gguf']);
  assert.ok(!serverCommand(cleared, {}, '/').args.includes('--model'));
  assert.equal(classifyChange(set, cleared), 'restart');
});

test('messages asking for a machine-scoped setting name the Remote settings for remote windows', () => {
  const hint = whereToSet('quickfill.serverPath');
  assert.match(hint, /^set quickfill\.serverPath in your User settings/);
  assert.match(hint, /Remote settings \(Preferences: Open Remote Settings\)/);
  // package.json says the same for each machine-scoped setting.
  const props = contributed();
  for (const key of machineScoped) {
    assert.match(props[key].description ?? '', /Remote settings/, key);
  }
});

test('the doctor runs the same binary with the same model', () => {
  const s = readSettings(getter({ serverPath: '~/bin/quickfill', modelPath: '${env:M}/x.gguf', logLevel: 'debug' }));
  assert.deepEqual(doctorCommand(s, { M: '/models' }, '/home/u'), {
    command: '/home/u/bin/quickfill', args: ['doctor', '--model', '/models/x.gguf'],
  });
  assert.deepEqual(doctorCommand(readSettings(getter({})), {}, '/home/u'), { command: 'quickfill', args: ['doctor'] });
});
