// Unit tests of status.ts: reading quickfill/stats and the status-bar text.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseStats, statusText, stateFromStats, isNoModelMessage } from '../src/status';

test('stats: snake_case and camelCase, nested last request', () => {
  const a = parseStats({ model: 'tiny.gguf', last: { total_ms: 12.5 }, requests: 4,
                         total_ms: { p50: 10, p90: 20, p99: 30 } });
  assert.equal(a.modelLoaded, true);
  assert.equal(a.modelName, 'tiny.gguf');
  assert.equal(a.lastLatencyMs, 12.5);
  assert.equal(a.requests, 4);
  assert.deepEqual([a.p50Ms, a.p90Ms, a.p99Ms], [10, 20, 30]);
  const b = parseStats({ modelLoaded: false, lastLatencyMs: 250 });
  assert.equal(b.modelLoaded, false);
  assert.equal(b.lastLatencyMs, 250);
  const c = parseStats(null);
  assert.equal(c.modelLoaded, undefined);
  assert.equal(c.lastLatencyMs, undefined);
});

test('status text shows the state and the last latency', () => {
  const stats = parseStats({ model: { name: 'tiny', loaded: true }, last: { total_ms: 42.25 } });
  const ready = statusText('ready', stats);
  assert.equal(ready.text, '$(sparkle) quickfill 42.3 ms');
  assert.match(ready.tooltip, /Model: tiny/);
  assert.match(ready.tooltip, /Last completion: 42.3 ms/);
  assert.equal(statusText('ready', parseStats({ last: { total_ms: 1234 } })).text, '$(sparkle) quickfill 1234 ms');
  assert.equal(statusText('no-model').text, '$(warning) quickfill: no model');
  assert.match(statusText('loading', undefined, '40%').tooltip, /Loading model: 40%/);
  assert.equal(statusText('disabled').text, '$(circle-slash) quickfill');
});

test('state transitions from stats', () => {
  assert.equal(stateFromStats(parseStats({ model_loaded: false }), 'starting'), 'no-model');
  assert.equal(stateFromStats(parseStats({ model_loaded: true }), 'no-model'), 'ready');
  assert.equal(stateFromStats(parseStats({}), 'starting'), 'ready');
  assert.equal(stateFromStats(parseStats({ model_loaded: true }), 'disabled'), 'disabled');
  assert.equal(isNoModelMessage('quickfill: no model is loaded; set quickfill.model'), true);
  assert.equal(isNoModelMessage('loaded tiny.gguf'), false);
});
