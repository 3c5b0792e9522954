// Next-edit suggestions: the quickfill/nextEdit request and its answer, and
// the acceptance reports (quickfill/didShow, quickfill/didAccept). Pure: no
// `vscode` import; positions are LSP-shaped ({line, character} in UTF-16 code
// units, which is also what VS Code and JavaScript strings use, so a length
// here is simply a string's length).
import { Position, Range } from './inline';

export const NextEditMethod = 'quickfill/nextEdit';
export const DidShowMethod = 'quickfill/didShow';
export const DidAcceptMethod = 'quickfill/didAccept';

export interface NextEdit { range: Range; newText: string; atCursor: boolean; }
export interface NextEditAnswer { id: string; version: number; edits: NextEdit[]; reason?: string; }

export function nextEditParams(uri: string, version: number | undefined, position: Position) {
  const textDocument: { uri: string; version?: number } = { uri };
  if (version !== undefined) textDocument.version = version;
  return { textDocument, position };
}

function isPosition(v: any): v is Position {
  return !!v && Number.isInteger(v.line) && Number.isInteger(v.character) && v.line >= 0 && v.character >= 0;
}
function isRange(v: any): v is Range { return !!v && isPosition(v.start) && isPosition(v.end); }
function before(a: Position, b: Position) { return a.line < b.line || (a.line === b.line && a.character < b.character); }

// The answer, with malformed edits dropped; undefined when it is not one.
export function parseNextEdit(result: unknown): NextEditAnswer | undefined {
  const r: any = result;
  if (!r || typeof r !== 'object' || typeof r.id !== 'string' || !Array.isArray(r.edits)) return undefined;
  const edits: NextEdit[] = [];
  for (const e of r.edits) {
    if (!e || !isRange(e.range) || typeof e.newText !== 'string' || before(e.range.end, e.range.start)) continue;
    edits.push({ range: e.range, newText: e.newText, atCursor: e.atCursor === true });
  }
  const out: NextEditAnswer = { id: r.id, version: Number.isInteger(r.version) ? r.version : 0, edits };
  if (typeof r.reason === 'string') out.reason = r.reason;
  return out;
}

// Edits that start on the cursor's line are shown as inline edits (the server
// offers them through textDocument/inlineCompletion too); the others are away
// from the cursor and get a hint that jumps to them.
export function editsAway(answer: NextEditAnswer, cursor: Position): NextEdit[] {
  return answer.edits.filter((e) => e.range.start.line !== cursor.line);
}

// The hint shown at the end of the cursor's line for the first edit away.
export function hintText(edit: NextEdit, cursor: Position): string {
  const dir = edit.range.start.line < cursor.line ? '↑' : '↓';
  const first = edit.newText.split('\n')[0];
  const what = first.length > 0 ? `: ${first.length > 40 ? first.slice(0, 40) + '…' : first}` : ': delete';
  return `  ${dir} quickfill: next edit at line ${edit.range.start.line + 1}${what}`;
}

// Total length of what the answer's edits insert (the acceptance unit).
export function shownLength(edits: NextEdit[]): number {
  return edits.reduce((n, e) => n + e.newText.length, 0);
}

export function didShowParams(id: string, source: 'completion' | 'inline' | 'nextEdit', explicit: boolean, length: number) {
  return { id, source, trigger: explicit ? 'explicit' : 'automatic', length };
}

export function didAcceptParams(id: string, acceptedLength: number) {
  return { id, acceptedLength };
}

// The part of a suggestion that was accepted when the document now holds
// `accepted` where the suggestion `shown` was offered (VS Code accepts a word
// or a line at a time): the length of their common prefix.
export function acceptedPrefix(shown: string, accepted: string): number {
  let n = 0;
  while (n < shown.length && n < accepted.length && shown[n] === accepted[n]) ++n;
  return n;
}
