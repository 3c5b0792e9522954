// The pure part of the explain command (src/explain.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { explainParams, parseExplanation, explanationText } from '../src/explain';

const answer = {
  format: 'starcoder2', prompt: '<fim_prefix>def f():\n<fim_suffix><fim_middle>', tokens: 5,
  parts: [
    { kind: 'special', origin: '', text: '<fim_prefix>', tokens: 1 },
    { kind: 'prefix', origin: 'file:///a.py', text: 'def f():\n', tokens: 2 },
    { kind: 'special', origin: '', text: '<fim_suffix>', tokens: 1 },
    { kind: 'special', origin: '', text: '<fim_middle>', tokens: 1 },
  ],
};

test('params are those of a completion request', () => {
  assert.deepEqual(explainParams('file:///a.py', { line: 3, character: 7 }),
    { textDocument: { uri: 'file:///a.py' }, position: { line: 3, character: 7 } });
});

test('the answer is read strictly', () => {
  assert.equal(parseExplanation(answer).parts.length, 4);
  assert.throws(() => parseExplanation(null), /not an object/);
  assert.throws(() => parseExplanation({ format: 'x', prompt: '', tokens: 1 }), /lacks format, prompt, tokens or parts/);
  assert.throws(() => parseExplanation({ ...answer, parts: [{ kind: 'prefix', text: '', tokens: 1 }] }), /part 0 lacks/);
});

test('the text lists the parts, then the prompt', () => {
  const t = explanationText(parseExplanation(answer), 'file:///a.py:4:8');
  const lines = t.split('\n');
  assert.equal(lines[0], 'quickfill prompt: starcoder2 format, 5 tokens in 4 parts');
  assert.equal(lines[1], 'at file:///a.py:4:8');
  assert.equal(lines[4], 'special          1  -');
  assert.equal(lines[5], 'prefix           2  file:///a.py');
  assert.ok(t.includes('----- prompt -----\n<fim_prefix>def f():\n<fim_suffix><fim_middle>\n----- end of prompt -----\n'));
  assert.ok(!t.includes('confidence gate'));  // an answer without a gate shows none
});

test('the text says which confidence gate applies and where it came from', () => {
  const gate = { automatic: { threshold: -2.5268, origin: 'calibrated /m/x.gguf.gate.json' },
                 explicit: { threshold: -100, origin: 'default' } };
  const t = explanationText(parseExplanation({ ...answer, gate }), 'file:///a.py:4:8');
  assert.ok(t.includes('\nconfidence gate, automatic triggers: -2.53 (calibrated /m/x.gguf.gate.json)\n'));
  assert.ok(t.includes('\nconfidence gate, explicit triggers: -100.00 (default)\n'));
});
