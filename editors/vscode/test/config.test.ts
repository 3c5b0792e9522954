// Unit tests of config.ts: settings -> command line, initializationOptions,
// didChangeConfiguration params, and what a change requires.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  readSettings, serverCommand, serverSettings, initializationOptions, didChangeConfigurationParams,
  classifyChange, expandPath, mergeSettings, defaultSettings, whereToSet,
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

test('command line carries log options; the model goes in the settings object', () => {
  const s = readSettings(getter({ serverPath: '~/bin/quickfill', modelPath: '~/m.gguf', logLevel: 'debug',
                                  logFile: '/tmp/qf.log' }));
  assert.deepEqual(serverCommand(s, {}, '/home/u'), {
    command: '/home/u/bin/quickfill',
    args: ['--stdio', '--log-level', 'debug', '--log-file', '/tmp/qf.log'],
  });
  assert.deepEqual(serverSettings(s, {}, '/home/u'), { model: '/home/u/m.gguf' });
});

test('server settings merge the free-form object under the dedicated ones', () => {
  const s = readSettings(getter({
    modelPath: '/m.gguf',
    'completion.autoDeadlineMs': 150,
    'completion.explicitDeadlineMs': 2000,
    server: { model: '/ignored.gguf', completion: { maxTokens: 32, autoDeadlineMs: 9 }, cache: { budgetMiB: 256 } },
  }));
  const expected = {
    model: '/m.gguf',
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
  assert.equal(classifyChange(base, w({ modelPath: '/m.gguf' })), 'notify');
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

test('package.json: executable, model and log file are machine-scoped', () => {
  const props = contributed();
  for (const key of ['quickfill.serverPath', 'quickfill.modelPath', 'quickfill.logFile'])
    assert.equal(props[key]?.scope, 'machine', key);
  // The others may be set per workspace.
  for (const [key, p] of Object.entries(props)) {
    if (!['quickfill.serverPath', 'quickfill.modelPath', 'quickfill.logFile'].includes(key))
      assert.notEqual(p.scope, 'machine', key);
  }
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

test('the model comes from modelPath only; clearing it leaves the key out (the server default)', () => {
  const viaServer = readSettings(getter({ server: { model: '/workspace-chosen.gguf', completion: { maxTokens: 8 } } }));
  assert.deepEqual(serverSettings(viaServer, {}, '/'), { completion: { maxTokens: 8 } });
  assert.deepEqual(viaServer.server, { model: '/workspace-chosen.gguf', completion: { maxTokens: 8 } });  // not modified
  const set = readSettings(getter({ modelPath: '/m.gguf' }));
  const cleared = readSettings(getter({ modelPath: '' }));
  assert.deepEqual(serverSettings(set, {}, '/'), { model: '/m.gguf' });
  assert.deepEqual(serverSettings(cleared, {}, '/'), {});
  assert.equal(classifyChange(set, cleared), 'notify');
});

test('messages asking for a machine-scoped setting name the Remote settings for remote windows', () => {
  const hint = whereToSet('quickfill.serverPath');
  assert.match(hint, /^set quickfill\.serverPath in your User settings/);
  assert.match(hint, /Remote settings \(Preferences: Open Remote Settings\)/);
  // package.json says the same for each machine-scoped setting.
  const props = contributed();
  for (const key of ['quickfill.serverPath', 'quickfill.modelPath', 'quickfill.logFile']) {
    assert.match(props[key].description ?? '', /Remote settings/, key);
  }
});
