// Unit tests of config.ts: settings -> command line, initializationOptions,
// didChangeConfiguration params, and what a change requires.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  readSettings, serverCommand, serverSettings, initializationOptions, didChangeConfigurationParams,
  classifyChange, expandPath, mergeSettings, defaultSettings,
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
