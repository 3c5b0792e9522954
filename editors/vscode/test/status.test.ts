// Unit tests of status.ts: reading quickfill/stats + quickfill/status and the status-bar text.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseStats, parseSources, sourcesText, statusText, stateFromStats, isNoModelMessage } from '../src/status';

const stats = {
  requests: 3, answered: 2, noModel: 0,
  ttftMs: { count: 2, p50: 5, p90: 6, p99: 6, max: 6 },
  totalMs: { count: 2, p50: 10, p90: 20, p99: 30, max: 30 },
  recent: [
    { outcome: 'answered', wallMs: 11.5, totalMs: 10 },
    { outcome: 'answered', wallMs: 42.25, totalMs: 40 },
    { outcome: 'cancelled', wallMs: 1, totalMs: 0, reason: 'content_modified' },
  ],
};
const status = { modelLoaded: true, modelLoading: false, modelPath: '/m/tiny.gguf', model: 'tiny llama q8_0 (cpu)' };

test('stats + status: model, last answered latency, percentiles', () => {
  const v = parseStats(stats, status);
  assert.equal(v.modelLoaded, true);
  assert.equal(v.modelLoading, false);
  assert.equal(v.modelName, 'tiny llama q8_0 (cpu)');
  assert.equal(v.lastLatencyMs, 42.25, 'the newest answered request, not the cancelled one');
  assert.equal(v.requests, 3);
  assert.deepEqual([v.p50Ms, v.p90Ms, v.p99Ms], [10, 20, 30]);
});

test('missing or partial answers stay undefined', () => {
  const a = parseStats(null);
  assert.equal(a.modelLoaded, undefined);
  assert.equal(a.lastLatencyMs, undefined);
  const b = parseStats({ recent: [] }, { modelLoaded: false, modelLoading: false, noModelReason: 'not found' });
  assert.equal(b.modelLoaded, false);
  assert.equal(b.noModelReason, 'not found');
  assert.equal(b.lastLatencyMs, undefined);
  assert.equal(parseStats({ recent: [{ total_ms: 7 }] }).lastLatencyMs, 7);
  const none = parseStats({ totalMs: { count: 0, p50: 0, p90: 0, p99: 0 } },
                          { modelLoaded: false, modelPath: '/x.gguf', noModelReason: 'cannot open /x.gguf' });
  assert.equal(none.p50Ms, undefined, 'no percentiles before any answer');
  const tip = statusText('no-model', none).tooltip;
  assert.match(tip, /Model: none loaded \(cannot open \/x.gguf\)/);
  // Where to set the model, remote windows included (machine scope is read from the Remote settings there).
  assert.match(tip, /set quickfill\.modelPath in your User settings/);
  assert.match(tip, /in a remote window .*code-server.* in the Remote settings/);
  assert.doesNotMatch(tip, /p50/);
});

test('status text shows the state and the last latency', () => {
  const v = parseStats(stats, status);
  const ready = statusText('ready', v);
  assert.equal(ready.text, '$(sparkle) quickfill 42.3 ms');
  assert.match(ready.tooltip, /Model: tiny llama/);
  assert.match(ready.tooltip, /Last completion: 42.3 ms/);
  assert.match(ready.tooltip, /p50\/p90\/p99: 10.0 ms \/ 20.0 ms \/ 30.0 ms/);
  assert.equal(statusText('ready', parseStats({ recent: [{ wallMs: 1234 }] })).text, '$(sparkle) quickfill 1234 ms');
  assert.equal(statusText('no-model').text, '$(warning) quickfill: no model');
  assert.match(statusText('no-model', parseStats({}, { modelLoaded: false, noModelReason: 'x.gguf missing' })).tooltip,
               /none loaded \(x.gguf missing\)/);
  assert.match(statusText('loading', undefined, '40%').tooltip, /Loading model: 40%/);
  assert.equal(statusText('disabled').text, '$(circle-slash) quickfill');
});

test('where the model lives: this window\'s server, or the daemon and how many windows share it', () => {
  const own = parseStats(stats, { ...status, daemon: null });
  assert.equal(own.modelHost, 'process');
  assert.match(statusText('ready', own).tooltip, /Model held by this window's server/);
  const shared = parseStats(stats, { ...status, daemon: { pid: 4242, socket: '/run/user/1/quickfill/daemon.sock',
                                                         sessions: 3, engines: 1, sessionsOnEngine: 3 } });
  assert.equal(shared.modelHost, 'daemon');
  assert.equal(shared.sharedBy, 3);
  assert.match(statusText('ready', shared).tooltip, /Model held by the quickfill daemon \(pid 4242\), shared with 2 other windows/);
  const alone = parseStats(stats, { ...status, daemon: { pid: 7, sessionsOnEngine: 1 } });
  assert.match(statusText('ready', alone).tooltip, /Model held by the quickfill daemon \(pid 7\)$/m);
  const older = parseStats(stats, status);  // a server that does not say
  assert.equal(older.modelHost, undefined);
  assert.doesNotMatch(statusText('ready', older).tooltip, /held by/);
});

test('state transitions from stats', () => {
  assert.equal(stateFromStats(parseStats({}, { modelLoaded: false, modelLoading: true }), 'starting'), 'loading');
  assert.equal(stateFromStats(parseStats({}, { modelLoaded: false }), 'starting'), 'no-model');
  assert.equal(stateFromStats(parseStats({}, { modelLoaded: true }), 'no-model'), 'ready');
  assert.equal(stateFromStats(parseStats({}), 'starting'), 'ready');
  assert.equal(stateFromStats(parseStats({}, { modelLoaded: true }), 'disabled'), 'disabled');
  assert.equal(isNoModelMessage('quickfill: no model is loaded, so completions will be empty.'), true);
  assert.equal(isNoModelMessage('loaded tiny.gguf'), false);
});

test('completion sources: the meter of quickfill/stats with the health of quickfill/status', () => {
  const s = {
    sources: [
      { name: 'cloud', kind: 'openai', state: 'ok', requests: 12, answered: 11, errors: 1, promptTokens: 3400,
        completionTokens: 210, latencyMs: { count: 11, p50: 180, p90: 420.4, p99: 500, max: 500 } },
      { name: 'local', kind: 'local', state: 'ok', requests: 1, answered: 0, errors: 0, promptTokens: 0,
        completionTokens: 0, latencyMs: { count: 0, p50: 0, p90: 0, p99: 0, max: 0 } },
    ],
  };
  const st = { sources: [{ name: 'cloud', kind: 'openai', state: 'degraded', lastError: 'endpoint down' },
                         { name: 'local', kind: 'local', state: 'ok', lastError: '' }] };
  const v = parseSources(s, st);
  assert.equal(v.length, 2);
  assert.equal(v[0].state, 'degraded', 'the status answer says how it is now');
  assert.equal(v[0].lastError, 'endpoint down');
  assert.equal(v[1].p50Ms, undefined, 'no percentiles before an answer');
  assert.deepEqual(sourcesText(v), [
    'cloud (openai, degraded): 12 requests, 1 error, 3400+210 tokens, p50/p90 180 ms / 420 ms -- last error: endpoint down',
    'local (local, ok): 1 request, 0 errors, 0+0 tokens',
  ]);
  assert.deepEqual(parseSources({}), [], 'an older server without sources');
  assert.deepEqual(parseSources({ sources: 'x' }), []);
});
