// Unit tests of inline.ts: request params and the conversion of inlineCompletion
// and completion answers into ghost-text items.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  lspTriggerKind, inlineCompletionParams, completionParams, inlineItems, completionItems,
  usableAsGhost, isIncomplete,
} from '../src/inline';

const cursor = { line: 3, character: 8 };
const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('trigger kinds map from VS Code to LSP', () => {
  assert.equal(lspTriggerKind(0), 1); // Invoke -> Invoked
  assert.equal(lspTriggerKind(1), 2); // Automatic -> Automatic
  assert.deepEqual(inlineCompletionParams('file:///a.py', cursor, 1), {
    textDocument: { uri: 'file:///a.py' }, position: cursor, context: { triggerKind: 2 },
  });
  const sel = { range: r(3, 4, 3, 8), text: 'print' };
  assert.deepEqual(inlineCompletionParams('file:///a.py', cursor, 0, sel).context, { triggerKind: 1, selectedCompletionInfo: sel });
  assert.deepEqual(completionParams('file:///a.py', cursor, true).context, { triggerKind: 1 });
  assert.deepEqual(completionParams('file:///a.py', cursor, false, '.').context, { triggerKind: 2, triggerCharacter: '.' });
});

test('inline answers: list, array, null, snippets, missing ranges', () => {
  assert.deepEqual(inlineItems(null, cursor), []);
  assert.deepEqual(inlineItems({ items: [] }, cursor), []);
  assert.deepEqual(inlineItems({ items: [{ insertText: 'foo()', range: r(3, 4, 3, 8) }] }, cursor),
                   [{ insertText: 'foo()', range: r(3, 4, 3, 8) }]);
  assert.deepEqual(inlineItems([{ insertText: { kind: 'snippet', value: 'x = 1' } }], cursor),
                   [{ insertText: 'x = 1', range: r(3, 8, 3, 8) }]);
  // Empty texts and malformed entries are dropped; a malformed range falls back to the cursor.
  assert.deepEqual(inlineItems({ items: [{ insertText: '' }, null, { insertText: 'a', range: { start: 1 }, filterText: 'a' }] }, cursor),
                   [{ insertText: 'a', range: r(3, 8, 3, 8), filterText: 'a' }]);
});

test('completion answers: textEdit, InsertReplaceEdit, insertText, label', () => {
  const list = {
    isIncomplete: true,
    items: [
      { label: 'l1', textEdit: { range: r(3, 0, 3, 8), newText: 'def f():' }, filterText: 'def' },
      { label: 'l2', textEdit: { insert: r(3, 8, 3, 8), replace: r(3, 8, 3, 10), newText: 'xy' } },
      { label: 'l3', insertText: 'ins' },
      { label: 'l4' },
      { label: '', insertText: '' },
    ],
  };
  assert.equal(isIncomplete(list), true);
  assert.equal(isIncomplete(list.items), false);
  assert.deepEqual(completionItems(list, cursor), [
    { insertText: 'def f():', range: r(3, 0, 3, 8), filterText: 'def' },
    { insertText: 'xy', range: r(3, 8, 3, 10) },
    { insertText: 'ins', range: r(3, 8, 3, 8) },
    { insertText: 'l4', range: r(3, 8, 3, 8) },
  ]);
  assert.deepEqual(completionItems(null, cursor), []);
});

test('ghost text needs a range on the cursor line that contains the cursor', () => {
  assert.equal(usableAsGhost({ insertText: 'a', range: r(3, 8, 3, 8) }, cursor), true);
  assert.equal(usableAsGhost({ insertText: 'a', range: r(3, 2, 3, 9) }, cursor), true);
  assert.equal(usableAsGhost({ insertText: 'a', range: r(2, 0, 3, 8) }, cursor), false);
  assert.equal(usableAsGhost({ insertText: 'a', range: r(3, 9, 3, 9) }, cursor), false);
});
