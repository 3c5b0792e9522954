// VS Code side of next-edit suggestions and acceptance reports (the pure
// parts are in next_edit.ts):
//   - after a pause in typing (quickfill.nextEdit.enable, debounced by
//     quickfill.nextEdit.delayMs) quickfill/nextEdit is asked at the cursor;
//     edits on the cursor's line come back through the inline completion
//     provider (the server offers them as inline items whose range replaces
//     the text they change), so it re-triggers inline suggestions; an edit
//     elsewhere gets a hint at the end of the cursor's line and its target
//     highlighted with the new text after it;
//   - quickfill.jumpToNextEdit moves the cursor to it, quickfill.acceptNextEdit
//     applies the edits (Alt+] and Alt+Enter while a next edit is shown);
//   - every inline item and next edit offered is reported with
//     quickfill/didShow, an accepted one with quickfill/didAccept (an inline
//     item's command runs on acceptance; one taken a word or line at a time
//     is seen from the document changes, next_edit.ts PartialAccept).
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';

import {
  NextEditMethod, DidShowMethod, DidAcceptMethod, NextEdit, nextEditParams, parseNextEdit, editsAway, hintText,
  shownLength, didShowParams, didAcceptParams, PartialAccept, Pos,
} from './next_edit';

export const AcceptInlineCommand = 'quickfill.didAcceptInline';

// Runs a VS Code command whose failure (an older VS Code without it) changes nothing here.
function run(command: string, ...args: unknown[]): void {
  void Promise.resolve(vscode.commands.executeCommand(command, ...args)).catch(() => undefined);
}

interface Shown { uri: string; version: number; id: string; edits: NextEdit[]; explicit: boolean; }

export class NextEditUi {
  private timer: NodeJS.Timeout | undefined;
  private shown: Shown | undefined;
  private ids = 0;
  private readonly partial = new PartialAccept();
  private readonly hint = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' },
  });
  private readonly target = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });

  // `skip`: documents never asked about (private ones, which the client does not send).
  constructor(private readonly client: () => LanguageClient | undefined, private readonly log: (s: string) => void,
              private readonly skip: (d: vscode.TextDocument) => boolean = () => false) {}

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      this.hint, this.target,
      vscode.commands.registerCommand('quickfill.nextEdit', () => this.request(true)),
      vscode.commands.registerCommand('quickfill.jumpToNextEdit', () => this.jump()),
      vscode.commands.registerCommand('quickfill.acceptNextEdit', () => this.accept()),
      vscode.commands.registerCommand(AcceptInlineCommand, (id: string, length: number) => {
        this.partial.acceptedWhole(id);
        this.report(DidAcceptMethod, didAcceptParams(id, length));
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        const part = this.partial.change(e.document.uri.toString(), e.contentChanges.map((c) => ({
          range: { start: { line: c.range.start.line, character: c.range.start.character },
                   end: { line: c.range.end.line, character: c.range.end.character } },
          text: c.text,
        })));
        if (part) this.report(DidAcceptMethod, part);
        if (this.shown && e.document.uri.toString() === this.shown.uri) this.clear();
        this.schedule();
      }),
    );
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration('quickfill').get<boolean>('nextEdit.enable', true) !== false;
  }

  // An id for an inline item shown now, reported as shown; `rest` (the part
  // not typed yet, starting at `at` in `uri`) is watched for a partial acceptance.
  inlineShown(length: number, explicit: boolean, uri?: string, at?: Pos, rest?: string): string {
    const id = `inline-${++this.ids}`;
    this.report(DidShowMethod, didShowParams(id, 'inline', explicit, length));
    const previous = uri && at && rest !== undefined ? this.partial.shown(id, uri, at, rest) : this.partial.flush();
    if (previous) this.report(DidAcceptMethod, previous);
    return id;
  }

  private report(method: string, params: object): void {
    const c = this.client();
    if (c && c.state === State.Running) void c.sendNotification(method, params).catch(() => undefined);
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (!this.enabled()) return;
    const delay = vscode.workspace.getConfiguration('quickfill').get<number>('nextEdit.delayMs', 600) ?? 600;
    this.timer = setTimeout(() => { this.timer = undefined; void this.request(false); }, delay);
  }

  clear(): void {
    this.shown = undefined;
    for (const editor of vscode.window.visibleTextEditors ?? []) {
      editor.setDecorations(this.hint, []);
      editor.setDecorations(this.target, []);
    }
    run('setContext', 'quickfill.nextEditShown', false);
  }

  async request(explicit: boolean): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const c = this.client();
    if (!editor || !c || c.state !== State.Running) return;
    const document = editor.document;
    if (this.skip(document)) return;
    const version = document.version;
    const pos = editor.selection.active;
    const uri = c.code2ProtocolConverter.asUri(document.uri);
    let answer;
    try {
      answer = parseNextEdit(await c.sendRequest(NextEditMethod, nextEditParams(uri, version, pos)));
    } catch (err) {
      const code = (err as { code?: number } | undefined)?.code;
      if (code !== -32801 && code !== -32800) this.log(`next edit failed: ${String(err)}`);
      return;
    }
    if (!answer || document.version !== version || answer.edits.length === 0) return;
    this.clear();
    this.shown = { uri: document.uri.toString(), version, id: answer.id, edits: answer.edits, explicit };
    this.report(DidShowMethod, didShowParams(answer.id, 'nextEdit', explicit, shownLength(answer.edits)));
    const cursor = { line: pos.line, character: pos.character };
    const away = editsAway(answer, cursor);
    if (away.length < answer.edits.length) run('editor.action.inlineSuggest.trigger');
    if (away.length > 0) {
      const line = document.lineAt(pos.line);
      editor.setDecorations(this.hint, [{
        range: new vscode.Range(line.range.end, line.range.end),
        renderOptions: { after: { contentText: hintText(away[0], cursor) } },
      }]);
      editor.setDecorations(this.target, away.map((e) => ({
        range: new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character),
        renderOptions: { after: { contentText: e.newText.split('\n')[0], color: new vscode.ThemeColor('editorGhostText.foreground') } },
      })));
      run('setContext', 'quickfill.nextEditShown', true);
    }
  }

  async jump(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const s = this.shown;
    if (!editor || !s || editor.document.uri.toString() !== s.uri) return;
    const cursor = editor.selection.active;
    const e = editsAway({ id: s.id, version: s.version, edits: s.edits }, { line: cursor.line, character: cursor.character })[0] ?? s.edits[0];
    const at = new vscode.Position(e.range.start.line, e.range.start.character);
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(new vscode.Range(at, at));
  }

  async accept(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const s = this.shown;
    if (!editor || !s || editor.document.uri.toString() !== s.uri || editor.document.version !== s.version) return;
    const ok = await editor.edit((b) => {
      for (const e of s.edits)
        b.replace(new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
    });
    if (ok) this.report(DidAcceptMethod, didAcceptParams(s.id, shownLength(s.edits)));
    this.clear();
  }
}
