// A test double of the `vscode` module, just large enough for vscode-languageclient 9
// and extension.ts to run under node: real classes where values matter (Uri,
// Position, Range, EventEmitter, InlineCompletionItem, ...), recorded
// registrations (providers, commands, status-bar items, output channels), a
// settings store whose update() fires onDidChangeConfiguration, and text
// documents the test opens and edits. Anything else resolves to an inert
// "anything" proxy (callable, constructible, every property another proxy), so
// features the extension does not use stay harmless.
//
// This is not VS Code: it cannot show how VS Code renders ghost text or the
// status bar; it lets the real extension code and the real language client run
// against the real server binary.
import * as path from 'node:path';

function anything(name: string): any {
  const fn = function () { return anything(name + '()'); };
  return new Proxy(fn, {
    get(_t, prop) {
      if (prop === Symbol.toPrimitive) return () => 0;
      if (prop === 'then') return undefined;  // not a thenable
      if (prop === 'dispose') return () => undefined;
      return anything(`${name}.${String(prop)}`);
    },
    apply() { return anything(name + '()'); },
    construct() { return anything('new ' + name); },
  });
}

function withFallback<T extends object>(name: string, obj: T): T {
  return new Proxy(obj, {
    get(t, prop, recv) {
      if (prop in t) return Reflect.get(t, prop, recv);
      if (typeof prop === 'string' && /^(register|on|create)/.test(prop)) return () => new Disposable(() => undefined);
      return anything(`${name}.${String(prop)}`);
    },
  });
}

export class Disposable {
  constructor(private readonly fn: () => void) {}
  static from(...items: { dispose(): unknown }[]) { return new Disposable(() => items.forEach((d) => d.dispose())); }
  dispose() { this.fn(); }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => unknown)[] = [];
  event = (listener: (e: T) => unknown, thisArg?: unknown, disposables?: Disposable[]) => {
    const l = thisArg ? listener.bind(thisArg) : listener;
    this.listeners.push(l);
    const d = new Disposable(() => { this.listeners = this.listeners.filter((x) => x !== l); });
    if (disposables) disposables.push(d);
    return d;
  };
  fire(e: T) { for (const l of [...this.listeners]) l(e); }
  dispose() { this.listeners = []; }
}

export class Uri {
  private constructor(readonly scheme: string, readonly authority: string, readonly path: string,
                      readonly query = '', readonly fragment = '') {}
  static file(p: string) { return new Uri('file', '', path.resolve(p)); }
  static parse(s: string) {
    const m = /^([a-z][a-z0-9+.-]*):(?:\/\/([^/]*))?([^?#]*)/i.exec(s);
    if (!m) return new Uri('file', '', s);
    return new Uri(m[1], m[2] ?? '', decodeURIComponent(m[3]));
  }
  get fsPath() { return this.path; }
  with(change: { scheme?: string; path?: string }) {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path);
  }
  toString() { return `${this.scheme}://${this.authority}${encodeURI(this.path)}`; }
  toJSON() { return this.toString(); }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
  isEqual(o: Position) { return o.line === this.line && o.character === this.character; }
  isBefore(o: Position) { return this.line < o.line || (this.line === o.line && this.character < o.character); }
  translate(dl = 0, dc = 0) { return new Position(this.line + dl, this.character + dc); }
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number') { this.start = new Position(a, b as number); this.end = new Position(c!, d!); }
    else { this.start = a; this.end = b as Position; }
  }
  get isEmpty() { return this.start.isEqual(this.end); }
  contains(p: Position) { return !p.isBefore(this.start) && !this.end.isBefore(p); }
}
export class Selection extends Range {}
export class Location { constructor(readonly uri: Uri, readonly range: Range) {} }

export class InlineCompletionItem {
  filterText?: string;
  constructor(public insertText: string, public range?: Range, public command?: unknown) {}
}
export class InlineCompletionList { constructor(public items: InlineCompletionItem[]) {} }

export class CompletionItem {
  [key: string]: unknown;
  constructor(public label: unknown, public kind?: number) {}
}
export class CompletionList {
  constructor(public items: CompletionItem[] = [], public isIncomplete = false) {}
}
export class TextEdit {
  constructor(public range: Range, public newText: string) {}
  static replace(range: Range, newText: string) { return new TextEdit(range, newText); }
  static insert(p: Position, newText: string) { return new TextEdit(new Range(p, p), newText); }
}
export class SnippetString { constructor(public value = '') {} }
export class MarkdownString { constructor(public value = '', public supportThemeIcons = false) {} }

export class CancellationError extends Error {}
export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel() { this.token.isCancellationRequested = true; this.emitter.fire(); }
  dispose() { this.emitter.dispose(); }
}

export const InlineCompletionTriggerKind = { Invoke: 0, Automatic: 1 };
export const StatusBarAlignment = { Left: 1, Right: 2 };
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };
export const version = '1.82.0';

// ---- recorded state the tests look at --------------------------------------

export interface OutputChannel { name: string; lines: string[]; append(s: string): void; appendLine(s: string): void;
  replace(s: string): void; clear(): void; show(): void; hide(): void; dispose(): void; }
export interface StatusBarItem { text: string; tooltip: unknown; command: unknown; visible: boolean;
  show(): void; hide(): void; dispose(): void; }

export const recorded = {
  inlineProviders: [] as { selector: unknown; provider: any }[],
  completionProviders: [] as { selector: unknown; provider: any }[],
  commands: new Map<string, (...a: unknown[]) => unknown>(),
  outputChannels: [] as OutputChannel[],
  statusBarItems: [] as StatusBarItem[],
  messages: [] as { kind: string; message: string }[],
  settings: new Map<string, unknown>(),
  contentProviders: new Map<string, any>(),
  shownDocuments: [] as TextDocument[],
  webviewPanels: [] as WebviewPanel[],
};

export interface WebviewPanel {
  viewType: string; title: string; options: unknown; webview: { html: string };
  revealed: number; disposed: boolean;
  reveal(): void; dispose(): void; onDidDispose(f: () => void): Disposable;
}

const configEmitter = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
const openEmitter = new EventEmitter<TextDocument>();
const closeEmitter = new EventEmitter<TextDocument>();
const changeEmitter = new EventEmitter<unknown>();
const saveEmitter = new EventEmitter<TextDocument>();

function configuration(section?: string) {
  const key = (k: string) => (section ? `${section}.${k}` : k);
  return {
    get<T>(k: string, dflt?: T): T | undefined {
      const full = key(k);
      if (recorded.settings.has(full)) return recorded.settings.get(full) as T;
      // Nested reads (getConfiguration('quickfill').get('completion')) see dotted keys as an object.
      const obj: Record<string, unknown> = {};
      for (const [kk, v] of recorded.settings) if (kk.startsWith(full + '.')) obj[kk.slice(full.length + 1)] = v;
      return Object.keys(obj).length ? (obj as T) : dflt;
    },
    has(k: string) { return recorded.settings.has(key(k)); },
    // The double keeps one level of settings: the User settings (globalValue).
    inspect<T>(k: string) {
      const v = this.get<T>(k);
      return { key: key(k), globalValue: v };
    },
    async update(k: string, v: unknown) {
      const full = key(k);
      if (v === undefined) recorded.settings.delete(full); else recorded.settings.set(full, v);
      configEmitter.fire({ affectsConfiguration: (s: string) => full === s || full.startsWith(s + '.') });
    },
  };
}

// A minimal TextDocument backed by a string.
export class TextDocument {
  version = 1;
  isClosed = false;
  isDirty = false;
  isUntitled = false;
  eol = 1;
  constructor(readonly uri: Uri, readonly languageId: string, private text: string) {}
  get fileName() { return this.uri.fsPath; }
  get lineCount() { return this.text.split('\n').length; }
  getText(range?: Range) {
    if (!range) return this.text;
    return this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  offsetAt(p: Position) {
    const lines = this.text.split('\n');
    let off = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) off += lines[i].length + 1;
    return off + Math.min(p.character, (lines[p.line] ?? '').length);
  }
  positionAt(off: number) {
    const before = this.text.slice(0, off).split('\n');
    return new Position(before.length - 1, before[before.length - 1].length);
  }
  lineAt(l: number | Position) {
    const line = typeof l === 'number' ? l : l.line;
    const text = this.text.split('\n')[line] ?? '';
    return { lineNumber: line, text, range: new Range(line, 0, line, text.length) };
  }
  // Applies an insertion and tells listeners, as VS Code does on typing.
  insert(at: Position, s: string) {
    const off = this.offsetAt(at);
    this.text = this.text.slice(0, off) + s + this.text.slice(off);
    this.version += 1;
    changeEmitter.fire({
      document: this,
      contentChanges: [{ range: new Range(at, at), rangeOffset: off, rangeLength: 0, text: s }],
      reason: undefined,
    });
  }
}

export const openDocuments: TextDocument[] = [];

export function openDocument(doc: TextDocument) {
  openDocuments.push(doc);
  openEmitter.fire(doc);
}

export function closeDocument(doc: TextDocument) {
  const i = openDocuments.indexOf(doc);
  if (i >= 0) openDocuments.splice(i, 1);
  doc.isClosed = true;
  closeEmitter.fire(doc);
}

// ---- namespaces ---------------------------------------------------------------

function matchScore(selector: any, doc: TextDocument): number {
  const sels = Array.isArray(selector) ? selector : [selector];
  for (const s of sels) {
    if (typeof s === 'string') { if (s === '*' || s === doc.languageId) return 10; continue; }
    if (!s) continue;
    if (s.scheme && s.scheme !== doc.uri.scheme) continue;
    if (s.language && s.language !== doc.languageId) continue;
    return 10;
  }
  return 0;
}

export const workspace = withFallback('workspace', {
  getConfiguration: configuration,
  onDidChangeConfiguration: configEmitter.event,
  onDidOpenTextDocument: openEmitter.event,
  onDidCloseTextDocument: closeEmitter.event,
  onDidChangeTextDocument: changeEmitter.event,
  onDidSaveTextDocument: saveEmitter.event,
  get textDocuments() { return openDocuments; },
  workspaceFolders: undefined,
  getWorkspaceFolder() { return undefined; },
  createFileSystemWatcher() { return anything('watcher'); },
  registerTextDocumentContentProvider(scheme: string, provider: unknown) {
    recorded.contentProviders.set(scheme, provider);
    return new Disposable(() => recorded.contentProviders.delete(scheme));
  },
  // Documents of a registered scheme come from its content provider (read-only in VS Code).
  async openTextDocument(uri: Uri) {
    const provider = recorded.contentProviders.get(uri.scheme);
    if (!provider) throw new Error(`no content provider for ${uri.scheme}`);
    return new TextDocument(uri, 'plaintext', await provider.provideTextDocumentContent(uri));
  },
});

export const languages = withFallback('languages', {
  match: matchScore,
  registerInlineCompletionItemProvider(selector: unknown, provider: unknown) {
    const entry = { selector, provider };
    recorded.inlineProviders.push(entry);
    return new Disposable(() => { recorded.inlineProviders = recorded.inlineProviders.filter((e) => e !== entry); });
  },
  registerCompletionItemProvider(selector: unknown, provider: unknown) {
    const entry = { selector, provider };
    recorded.completionProviders.push(entry);
    return new Disposable(() => { recorded.completionProviders = recorded.completionProviders.filter((e) => e !== entry); });
  },
  createDiagnosticCollection() { return anything('diagnostics'); },
});

export const commands = withFallback('commands', {
  registerCommand(id: string, fn: (...a: unknown[]) => unknown) {
    recorded.commands.set(id, fn);
    return new Disposable(() => recorded.commands.delete(id));
  },
  async executeCommand(id: string, ...args: unknown[]) {
    const fn = recorded.commands.get(id);
    if (!fn) throw new Error(`command not found: ${id}`);
    return fn(...args);
  },
});

function message(kind: string) {
  return async (m: string) => { recorded.messages.push({ kind, message: m }); return undefined; };
}

export const window = withFallback('window', {
  createOutputChannel(name: string): OutputChannel {
    const ch: OutputChannel = {
      name, lines: [],
      append(s) { if (ch.lines.length === 0) ch.lines.push(''); ch.lines[ch.lines.length - 1] += s; },
      appendLine(s) { ch.lines.push(s); },
      replace(s) { ch.lines = [s]; },
      clear() { ch.lines = []; }, show() {}, hide() {}, dispose() {},
    };
    recorded.outputChannels.push(ch);
    return ch;
  },
  createStatusBarItem(): StatusBarItem {
    const item: StatusBarItem = {
      text: '', tooltip: undefined, command: undefined, visible: false,
      show() { item.visible = true; }, hide() { item.visible = false; }, dispose() {},
    };
    recorded.statusBarItems.push(item);
    return item;
  },
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  async withProgress(_opts: unknown, task: (p: unknown, t: unknown) => Promise<unknown>) {
    return task({ report() {} }, new CancellationTokenSource().token);
  },
  createWebviewPanel(viewType: string, title: string, _column: unknown, options: unknown): WebviewPanel {
    const disposed: (() => void)[] = [];
    const panel: WebviewPanel = {
      viewType, title, options, webview: { html: '' }, revealed: 0, disposed: false,
      reveal() { panel.revealed++; },
      dispose() { panel.disposed = true; for (const f of disposed) f(); },
      onDidDispose(f) { disposed.push(f); return new Disposable(() => undefined); },
    };
    recorded.webviewPanels.push(panel);
    return panel;
  },
  async showTextDocument(doc: TextDocument) { recorded.shownDocuments.push(doc); return { document: doc }; },
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [],
  tabGroups: { all: [], onDidChangeTabs: () => new Disposable(() => undefined) },
  onDidChangeActiveTextEditor: () => new Disposable(() => undefined),
});

export const env = withFallback('env', { appName: 'Visual Studio Code', language: 'en', machineId: 'test' });

// Everything else a module might reach for (enums, rarely used classes).
export const ViewColumn = { Active: -1, Beside: -2, One: 1, Two: 2 };
export const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
export const CompletionTriggerKind = { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 };
export const CompletionItemKind = new Proxy({}, { get: () => 0 });
export const CompletionItemTag = { Deprecated: 1 };
export const TextDocumentSaveReason = { Manual: 1, AfterDelay: 2, FocusOut: 3 };

// The module object: known exports, with the inert fallback for the rest.
export function moduleObject(self: Record<string, unknown>) {
  return new Proxy(self, {
    get(t, prop) {
      if (prop in t) return t[prop as string];
      if (prop === '__esModule') return false;
      if (prop === 'then') return undefined;
      return anything(`vscode.${String(prop)}`);
    },
  });
}
