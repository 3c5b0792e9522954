// Turns the extension's settings into what the quickfill server is given:
// the command line (binary, --log-level, --log-file) and the "quickfill"
// settings object that travels as initializationOptions at start-up and in
// workspace/didChangeConfiguration afterwards. serverPath, modelPath, logLevel
// and logFile are machine-scoped settings (package.json): VS Code ignores them
// in workspace settings, so a workspace cannot pick the executable to run, the
// model to load or a file to write. The model travels as `--model` on the
// command line: the server takes file paths only from the user (its command
// line and its user config file), never from the settings object, which a
// repository's .vscode/settings.json may shape (docs/security.md). For the
// same reason the privileged keys of the free-form `quickfill.server` object
// are taken from the User settings only, never from workspace settings
// (serverObject); the server refuses them from any editor anyway.
//
// Pure: no `vscode` import, so node's test runner can check it directly and
// the protocol test can start the real binary exactly the way the extension
// does. A settings change either needs a restart (binary, log options) or is
// just sent to the running server (model, deadlines, anything else).

// Where a person sets a machine-scoped setting, for the messages that ask
// for one: in a remote window (Remote-SSH, WSL, a container, code-server)
// VS Code reads machine-scoped settings from the Remote settings only.
export function whereToSet(key: string): string {
  return `set ${key} in your User settings, or, in a remote window (Remote-SSH, WSL, a container, code-server), ` +
    'in the Remote settings (Preferences: Open Remote Settings): machine-scoped settings are read there';
}

export interface ExtensionSettings {
  enable: boolean;
  serverPath: string;
  modelPath: string;
  logLevel: string;
  logFile: string;
  inlineEnable: boolean;
  suggestEnable: boolean;
  autoDeadlineMs: number | null;
  explicitDeadlineMs: number | null;
  privacyExclude: string[];     // quickfill.privacy.exclude (privacy.ts)
  disabledLanguages: string[];  // quickfill.privacy.disabledLanguages
  server: Record<string, unknown>;
}

export const defaultSettings: ExtensionSettings = {
  enable: true,
  serverPath: 'quickfill',
  modelPath: '',
  logLevel: 'info',
  logFile: '',
  inlineEnable: true,
  suggestEnable: false,
  autoDeadlineMs: null,
  explicitDeadlineMs: null,
  privacyExclude: [],
  disabledLanguages: [],
  server: {},
};

// Reads settings through a getter shaped like vscode.WorkspaceConfiguration.get
// (section-relative keys such as "completion.autoDeadlineMs").
export function readSettings(get: (key: string) => unknown): ExtensionSettings {
  const str = (key: string, dflt: string): string => {
    const v = get(key);
    return typeof v === 'string' ? v : dflt;
  };
  const bool = (key: string, dflt: boolean): boolean => {
    const v = get(key);
    return typeof v === 'boolean' ? v : dflt;
  };
  const num = (key: string): number | null => {
    const v = get(key);
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
  };
  const strs = (key: string): string[] => {
    const v = get(key);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  };
  const obj = get('server');
  return {
    enable: bool('enable', defaultSettings.enable),
    serverPath: str('serverPath', defaultSettings.serverPath).trim() || defaultSettings.serverPath,
    modelPath: str('modelPath', '').trim(),
    logLevel: str('logLevel', defaultSettings.logLevel),
    logFile: str('logFile', '').trim(),
    inlineEnable: bool('inline.enable', defaultSettings.inlineEnable),
    suggestEnable: bool('suggest.enable', defaultSettings.suggestEnable),
    autoDeadlineMs: num('completion.autoDeadlineMs'),
    explicitDeadlineMs: num('completion.explicitDeadlineMs'),
    privacyExclude: strs('privacy.exclude'),
    disabledLanguages: strs('privacy.disabledLanguages'),
    server: obj && typeof obj === 'object' && !Array.isArray(obj) ? (obj as Record<string, unknown>) : {},
  };
}

// Expands a leading "~" and ${env:NAME} references, as users write them in settings.
export function expandPath(p: string, env: NodeJS.ProcessEnv, home: string): string {
  let out = p.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => env[name] ?? '');
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return out;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

// The command line that starts the server over stdio.
export function serverCommand(s: ExtensionSettings, env: NodeJS.ProcessEnv = process.env,
                              home: string = env.HOME ?? ''): ServerCommand {
  const args = ['--stdio'];
  if (s.modelPath) args.push('--model', expandPath(s.modelPath, env, home));
  if (s.logLevel) args.push('--log-level', s.logLevel);
  if (s.logFile) args.push('--log-file', expandPath(s.logFile, env, home));
  return { command: expandPath(s.serverPath, env, home), args };
}

// `quickfill doctor` for the binary and model the server is started with
// (the "quickfill: Run Doctor" command).
export function doctorCommand(s: ExtensionSettings, env: NodeJS.ProcessEnv = process.env,
                              home: string = env.HOME ?? ''): ServerCommand {
  const args = ['doctor'];
  if (s.modelPath) args.push('--model', expandPath(s.modelPath, env, home));
  return { command: expandPath(s.serverPath, env, home), args };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

// Deep merge: values of `over` win; nested objects are merged key by key.
export function mergeSettings(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k])
      ? mergeSettings(out[k] as Record<string, unknown>, v)
      : v;
  }
  return out;
}

// The keys of the server's settings that only the user may set
// (docs/security.md), as dotted paths.
export const privilegedKeys = ['model', 'completion.draftModel', 'sources', 'audit.path', 'audit.includeCode'];

// A copy of a settings object without the privileged keys, nested
// ({"audit": {"path": ...}}) or dotted ({"audit.path": ...}).
export function withoutPrivileged(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (privilegedKeys.includes(k)) continue;
    const under = privilegedKeys.filter((p) => p.startsWith(k + '.')).map((p) => p.slice(k.length + 1));
    if (under.length > 0 && isPlainObject(v)) {
      const inner: Record<string, unknown> = {};
      for (const [ik, iv] of Object.entries(v)) if (!under.includes(ik)) inner[ik] = iv;
      if (Object.keys(inner).length > 0) out[k] = inner;  // nothing left: no key (an empty "audit" asks nothing)
    } else {
      out[k] = v;
    }
  }
  return out;
}

// The levels of one setting, as vscode.WorkspaceConfiguration.inspect gives them.
export interface SettingLevels {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

// The effective `quickfill.server` object: the User settings' value, with the
// workspace's and the folder's merged over it without their privileged keys
// (a repository's .vscode/settings.json must not name hosts, keys or files).
export function serverObject(levels: SettingLevels | undefined): Record<string, unknown> {
  const obj = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});
  let out = mergeSettings(obj(levels?.defaultValue), obj(levels?.globalValue));
  out = mergeSettings(out, withoutPrivileged(obj(levels?.workspaceValue)));
  return mergeSettings(out, withoutPrivileged(obj(levels?.workspaceFolderValue)));
}

// The "quickfill" settings object the server reads: always complete (the
// server takes a key left out as its default). The free-form `server` object
// goes first so that the dedicated settings win over it; a `model` in it is
// dropped: the model file comes from modelPath, which is machine-scoped
// (package.json) and goes on the command line (serverCommand).
export function serverSettings(s: ExtensionSettings, _env: NodeJS.ProcessEnv = process.env,
                               _home: string = _env.HOME ?? ''): Record<string, unknown> {
  const free: Record<string, unknown> = { ...s.server };
  delete free.model;
  const dedicated: Record<string, unknown> = {};
  const completion: Record<string, unknown> = {};
  if (s.autoDeadlineMs !== null) completion.autoDeadlineMs = s.autoDeadlineMs;
  if (s.explicitDeadlineMs !== null) completion.explicitDeadlineMs = s.explicitDeadlineMs;
  if (Object.keys(completion).length > 0) dedicated.completion = completion;
  // The privacy lists: the server adds them to its own (they can only exclude more).
  const privacy: Record<string, unknown> = {};
  const freeList = (key: string): unknown[] => {
    const p = free.privacy;
    const v = isPlainObject(p) ? p[key] : undefined;
    return Array.isArray(v) ? v : [];
  };
  if (s.privacyExclude.length > 0) privacy.exclude = [...freeList('exclude'), ...s.privacyExclude];
  if (s.disabledLanguages.length > 0) privacy.disabledLanguages = [...freeList('disabledLanguages'), ...s.disabledLanguages];
  if (Object.keys(privacy).length > 0) dedicated.privacy = privacy;
  return mergeSettings(free, dedicated);
}

// initializationOptions for the initialize request: { quickfill: {...} }, the
// same shape as the `settings` of workspace/didChangeConfiguration.
export function initializationOptions(s: ExtensionSettings, env: NodeJS.ProcessEnv = process.env,
                                      home: string = env.HOME ?? ''): { quickfill: Record<string, unknown> } {
  return { quickfill: serverSettings(s, env, home) };
}

export function didChangeConfigurationParams(s: ExtensionSettings, env: NodeJS.ProcessEnv = process.env,
                                             home: string = env.HOME ?? ''): { settings: { quickfill: Record<string, unknown> } } {
  return { settings: { quickfill: serverSettings(s, env, home) } };
}

export type SettingsChange = 'none' | 'notify' | 'restart' | 'start' | 'stop';

// What a settings change means for a running (or stopped) server.
export function classifyChange(before: ExtensionSettings, after: ExtensionSettings): SettingsChange {
  if (before.enable !== after.enable) return after.enable ? 'start' : 'stop';
  if (!after.enable) return 'none';
  if (before.serverPath !== after.serverPath || before.logLevel !== after.logLevel ||
      before.logFile !== after.logFile || before.modelPath !== after.modelPath) return 'restart';
  // The documents the client sends change: a restart sends every document that is not private (again).
  if (JSON.stringify([before.privacyExclude, before.disabledLanguages]) !==
      JSON.stringify([after.privacyExclude, after.disabledLanguages])) return 'restart';
  const raw = (x: ExtensionSettings) =>
    JSON.stringify([x.autoDeadlineMs, x.explicitDeadlineMs, x.server]);
  if (raw(before) !== raw(after)) return 'notify';
  return 'none';
}
