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

// Partial acceptance of the shown inline item, seen from document changes:
// VS Code runs an item's command only when it is accepted whole, so taking it
// a word or a line at a time (Ctrl+Right) shows up as changes that insert the
// item's next part where the previous part ended. Each such change of at least
// 2 characters counts as taken (typing the suggestion by hand, one character
// per change, does not); the parts taken are reported (one didAccept) when
// the item goes away: another item is shown, the document changes otherwise,
// or flush() is called. An item accepted whole is reported by its command.
export interface Pos { line: number; character: number; }
export interface TextChange { range: { start: Pos; end: Pos }; text: string; }

export class PartialAccept {
  private cur: { id: string; uri: string; at: Pos; rest: string; taken: number } | undefined;

  // The item `id` was shown in `uri`, its not-yet-typed part `rest` starting at `at`.
  // Returns the report of the previous item's parts, if any were taken.
  shown(id: string, uri: string, at: Pos, rest: string): { id: string; acceptedLength: number } | undefined {
    const out = this.flush();
    this.cur = { id, uri, at: { ...at }, rest, taken: 0 };
    return out;
  }

  // The item was accepted whole (its command ran): nothing more to report for it.
  acceptedWhole(id: string): void {
    if (this.cur && this.cur.id === id) this.cur = undefined;
  }

  // Changes to `uri`; returns a report when they end the item with parts taken.
  change(uri: string, changes: readonly TextChange[]): { id: string; acceptedLength: number } | undefined {
    const c = this.cur;
    if (!c || c.uri !== uri || changes.length === 0) return undefined;
    const ch = changes.length === 1 ? changes[0] : undefined;
    const empty = ch && ch.range.start.line === ch.range.end.line && ch.range.start.character === ch.range.end.character;
    if (ch && empty && ch.range.start.line === c.at.line && ch.range.start.character === c.at.character &&
        ch.text.length >= 2 && c.rest.startsWith(ch.text)) {
      c.taken += ch.text.length;
      c.rest = c.rest.slice(ch.text.length);
      const lines = ch.text.split('\n');
      c.at = lines.length === 1 ? { line: c.at.line, character: c.at.character + ch.text.length }
        : { line: c.at.line + lines.length - 1, character: lines[lines.length - 1].length };
      return c.rest === '' ? this.flush() : undefined;
    }
    return this.flush();
  }

  flush(): { id: string; acceptedLength: number } | undefined {
    const c = this.cur;
    this.cur = undefined;
    return c && c.taken > 0 ? didAcceptParams(c.id, c.taken) : undefined;
  }
}
