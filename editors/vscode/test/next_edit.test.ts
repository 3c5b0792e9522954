// Unit tests of next_edit.ts: the quickfill/nextEdit request and answer and
// the acceptance reports.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  nextEditParams, parseNextEdit, editsAway, hintText, shownLength, didShowParams, didAcceptParams, acceptedPrefix, PartialAccept,
} from '../src/next_edit';

const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('request params carry the version when known', () => {
  assert.deepEqual(nextEditParams('file:///a.py', 3, { line: 1, character: 2 }),
                   { textDocument: { uri: 'file:///a.py', version: 3 }, position: { line: 1, character: 2 } });
  assert.deepEqual(nextEditParams('file:///a.py', undefined, { line: 0, character: 0 }).textDocument, { uri: 'file:///a.py' });
});

test('answers: malformed edits are dropped, silence has a reason', () => {
  assert.equal(parseNextEdit(null), undefined);
  assert.equal(parseNextEdit({ edits: [] }), undefined);
  const a = parseNextEdit({ id: 'n1', version: 2, format: 'sweep', edits: [
    { range: r(0, 7, 0, 7), newText: '_next', atCursor: true },
    { range: r(4, 2, 4, 1), newText: 'x' },          // end before start
    { range: r(9, 0, 9, 3), newText: 5 },              // not text
    { range: r(9, 0, 9, 3), newText: 'width' },
  ] });
  assert.deepEqual(a, { id: 'n1', version: 2, edits: [
    { range: r(0, 7, 0, 7), newText: '_next', atCursor: true },
    { range: r(9, 0, 9, 3), newText: 'width', atCursor: false },
  ] });
  assert.equal(parseNextEdit({ id: 'n2', version: 2, edits: [], reason: 'the model predicts no change' })?.reason,
               'the model predicts no change');
});

test('edits away from the cursor get a hint that says where', () => {
  const a = parseNextEdit({ id: 'n1', version: 1, edits: [
    { range: r(0, 7, 0, 7), newText: '_next', atCursor: true }, { range: r(9, 0, 9, 3), newText: 'width' },
  ] })!;
  const away = editsAway(a, { line: 0, character: 3 });
  assert.equal(away.length, 1);
  assert.equal(hintText(away[0], { line: 0, character: 3 }), '  ↓ quickfill: next edit at line 10: width');
  assert.equal(hintText({ range: r(0, 0, 0, 4), newText: '', atCursor: false }, { line: 5, character: 0 }),
               '  ↑ quickfill: next edit at line 1: delete');
  assert.equal(shownLength(a.edits), 10);
});

test('acceptance reports', () => {
  assert.deepEqual(didShowParams('i-1', 'inline', false, 12), { id: 'i-1', source: 'inline', trigger: 'automatic', length: 12 });
  assert.deepEqual(didAcceptParams('i-1', 5), { id: 'i-1', acceptedLength: 5 });
  assert.equal(acceptedPrefix('foo(bar)', 'foo('), 4);
  assert.equal(acceptedPrefix('foo', 'foo(bar)'), 3);
  assert.equal(acceptedPrefix('abc', 'x'), 0);
});

test('word-by-word acceptance of an inline item is reported once, as what was taken', () => {
  const p = new PartialAccept();
  const at = { line: 3, character: 8 };
  assert.equal(p.shown('i-1', 'file:///a.py', at, 'foo(bar, baz)\nnext'), undefined);
  const ins = (line: number, character: number, text: string) => [{ range: { start: { line, character }, end: { line, character } }, text }];
  // Ctrl+Right twice: "foo(" then "bar, " -- nothing reported yet.
  assert.equal(p.change('file:///a.py', ins(3, 8, 'foo(')), undefined);
  assert.equal(p.change('file:///a.py', ins(3, 12, 'bar, ')), undefined);
  // Another document's change is not ours.
  assert.equal(p.change('file:///b.py', ins(0, 0, 'zz')), undefined);
  // A typed character ends it: the 9 characters taken are reported.
  assert.deepEqual(p.change('file:///a.py', ins(3, 17, 'q')), { id: 'i-1', acceptedLength: 9 });
  assert.equal(p.flush(), undefined);

  // Typing the suggestion by hand (one character per change) takes nothing.
  p.shown('i-2', 'file:///a.py', at, 'xy');
  assert.equal(p.change('file:///a.py', ins(3, 8, 'x')), undefined);
  assert.equal(p.flush(), undefined);

  // Taking every part, across a line break, reports all of it at once.
  p.shown('i-3', 'file:///a.py', at, 'ab\ncd');
  assert.equal(p.change('file:///a.py', ins(3, 8, 'ab\n')), undefined);
  assert.deepEqual(p.change('file:///a.py', ins(4, 0, 'cd')), { id: 'i-3', acceptedLength: 5 });

  // Accepted whole (its command ran): nothing more; a new item flushes the old one's parts.
  p.shown('i-4', 'file:///a.py', at, 'long text');
  p.acceptedWhole('i-4');
  assert.equal(p.flush(), undefined);
  p.shown('i-5', 'file:///a.py', at, 'long text');
  p.change('file:///a.py', ins(3, 8, 'long'));
  assert.deepEqual(p.shown('i-6', 'file:///a.py', at, 'x'), { id: 'i-5', acceptedLength: 4 });
});
