// Ghost text: builds the textDocument/inlineCompletion request and turns the
// server's answer into plain items that extension.ts maps onto
// vscode.InlineCompletionItem. Also converts textDocument/completion items
// (CompletionList or CompletionItem[] with textEdit / insertText) into the
// same shape, used as a fallback when a server has no inlineCompletionProvider.
//
// Pure: no `vscode` import; positions and ranges are LSP-shaped
// ({line, character} in UTF-16 code units, which is also what VS Code uses).

export interface Position { line: number; character: number; }
export interface Range { start: Position; end: Position; }

export interface GhostItem {
  insertText: string;
  range: Range;      // the text the item replaces (empty at the cursor for a plain insertion)
  filterText?: string;
}

export const InlineCompletionMethod = 'textDocument/inlineCompletion';
export const CompletionMethod = 'textDocument/completion';
export const StatsMethod = 'quickfill/stats';
export const StatusMethod = 'quickfill/status';

// LSP 3.18 InlineCompletionTriggerKind: Invoked = 1, Automatic = 2.
// vscode.InlineCompletionTriggerKind: Invoke = 0, Automatic = 1.
export function lspTriggerKind(vscodeKind: number): 1 | 2 {
  return vscodeKind === 0 ? 1 : 2;
}

export interface SelectedCompletionInfo { range: Range; text: string; }

export function inlineCompletionParams(uri: string, position: Position, vscodeTriggerKind: number,
                                       selected?: SelectedCompletionInfo) {
  const context: { triggerKind: number; selectedCompletionInfo?: SelectedCompletionInfo } = {
    triggerKind: lspTriggerKind(vscodeTriggerKind),
  };
  if (selected) context.selectedCompletionInfo = selected;
  return { textDocument: { uri }, position, context };
}

// CompletionTriggerKind: Invoked = 1, TriggerCharacter = 2.
export function completionParams(uri: string, position: Position, explicit: boolean, triggerCharacter?: string) {
  const context: { triggerKind: number; triggerCharacter?: string } = {
    triggerKind: explicit || !triggerCharacter ? 1 : 2,
  };
  if (!explicit && triggerCharacter) context.triggerCharacter = triggerCharacter;
  return { textDocument: { uri }, position, context };
}

function isPosition(v: any): v is Position {
  return !!v && Number.isInteger(v.line) && Number.isInteger(v.character) && v.line >= 0 && v.character >= 0;
}

function isRange(v: any): v is Range {
  return !!v && isPosition(v.start) && isPosition(v.end);
}

function cursorRange(p: Position): Range {
  return { start: { ...p }, end: { ...p } };
}

// insertText may be a plain string or a StringValue snippet ({kind:'snippet', value}).
function textOf(v: any): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof v.value === 'string') return v.value;
  return undefined;
}

// Accepts InlineCompletionList ({items}) or InlineCompletionItem[] (or null).
export function inlineItems(result: unknown, cursor: Position): GhostItem[] {
  if (!result) return [];
  const raw: any[] = Array.isArray(result) ? result : Array.isArray((result as any).items) ? (result as any).items : [];
  const out: GhostItem[] = [];
  for (const it of raw) {
    const text = textOf(it?.insertText);
    if (text === undefined || text.length === 0) continue;
    const item: GhostItem = { insertText: text, range: isRange(it.range) ? it.range : cursorRange(cursor) };
    if (typeof it.filterText === 'string') item.filterText = it.filterText;
    out.push(item);
  }
  return out;
}

// Accepts CompletionList ({isIncomplete, items}) or CompletionItem[] (or null).
export function completionItems(result: unknown, cursor: Position): GhostItem[] {
  if (!result) return [];
  const raw: any[] = Array.isArray(result) ? result : Array.isArray((result as any).items) ? (result as any).items : [];
  const out: GhostItem[] = [];
  for (const it of raw) {
    if (!it || typeof it !== 'object') continue;
    let text: string | undefined;
    let range: Range = cursorRange(cursor);
    const edit = it.textEdit;
    if (edit && typeof edit.newText === 'string') {
      text = edit.newText;
      // TextEdit has `range`; InsertReplaceEdit has `insert` and `replace`.
      if (isRange(edit.range)) range = edit.range;
      else if (isRange(edit.replace)) range = edit.replace;
      else if (isRange(edit.insert)) range = edit.insert;
    } else {
      text = textOf(it.insertText) ?? (typeof it.label === 'string' ? it.label : undefined);
    }
    if (!text) continue;
    const item: GhostItem = { insertText: text, range };
    if (typeof it.filterText === 'string') item.filterText = it.filterText;
    out.push(item);
  }
  return out;
}

// Whether `isIncomplete` was set on a CompletionList (ask again on the next keystroke).
export function isIncomplete(result: unknown): boolean {
  return !!result && !Array.isArray(result) && (result as any).isIncomplete === true;
}

// Ghost text must start at or before the cursor on the cursor's line and end at or
// after it; VS Code drops items whose range does not contain the cursor.
export function usableAsGhost(item: GhostItem, cursor: Position): boolean {
  const { start, end } = item.range;
  if (start.line !== cursor.line || end.line !== cursor.line) return false;
  return start.character <= cursor.character && end.character >= cursor.character;
}
