// Which documents the extension keeps from the server (docs/security.md,
// "Privacy"): a path matching the server's default privacy.exclude list or
// quickfill.privacy.exclude, or a language in quickfill.privacy.disabledLanguages.
// Such a document is never sent (no didOpen/didChange/didClose) and never
// asked about. The server applies the same rules (the user's lists are sent
// to it and added to its own), so this is a second line, not the guarantee.
//
// The globs are the server's (indexing/path_glob.h): `*`, `?`, `[...]` within a
// segment, `**` across folders, no '/' = any file or folder name at any depth,
// a '/' anchors at the start, a match on a folder covers its contents, a
// trailing '/' matches folders only, `~/` is the home folder; no negation.
//
// Pure: no `vscode` import (unit-tested with node's test runner).

// The server's default privacy.exclude (server/core/privacy_filter.cpp; a server
// test checks that every entry is here).
export const defaultExclude: readonly string[] = [
  '.env', '.env.*', '.envrc', '*.pem', '*.key', 'id_rsa*', 'id_ed25519*', 'id_ecdsa*', 'id_dsa*', '*.p12',
  '*.pfx', '*.jks', '*.keystore', '*.kdbx', '*.tfvars', '*.kubeconfig',
  '.npmrc', '.yarnrc.yml', '.pypirc', '.netrc', '.pgpass', '.my.cnf', '.git-credentials', '.htpasswd',
  '.vault-token', '**/.cargo/credentials', '**/.cargo/credentials.toml', '**/.gem/credentials',
  '**/secrets/**', 'secrets.json', 'secrets.yaml', 'secrets.yml', 'secrets.toml', 'credentials.json',
  'client_secret*.json', 'service-account*.json',
  '**/.ssh/**', '**/.gnupg/**', '**/.aws/credentials', '**/.aws/sso/cache/**', '**/.aws/cli/cache/**',
  '**/.config/gcloud/**', '**/.azure/**', '**/.oci/**', '**/.bluemix/**', '**/.docker/config.json',
  '**/.kube/config', '**/.config/gh/hosts.yml', '**/.config/doctl/config.yaml', '**/.config/hcloud/cli.toml',
  '**/.config/rclone/rclone.conf', '**/.databrickscfg', '**/.s3cfg', '**/.boto', '**/.terraform.d/credentials.tfrc.json',
  '**/.fly/config.yml', '**/.wrangler/config/**', '**/.config/op/**',
];

// One glob segment against one path segment.
function segmentRegex(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '\\' && i + 1 < seg.length) re += seg[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) { re += '\\['; continue; }
      let body = seg.slice(i + 1, end);
      if (body.startsWith('!') || body.startsWith('^')) body = '^' + body.slice(1);
      re += '[' + body.replace(/\\/g, '\\\\') + ']';
      i = end;
    } else re += c.replace(/[.+^${}()|\]\\/]/g, '\\$&');
  }
  return new RegExp('^' + re + '$', 's');
}

interface Glob { text: string; segs: RegExp[]; doubleStar: boolean[]; anchored: boolean; dirOnly: boolean; }

function compile(pattern: string, home: string): Glob | undefined {
  let p = pattern;
  if (p === '~' || p.startsWith('~/')) {
    if (!home.startsWith('/')) return undefined;
    p = home + p.slice(1);
  }
  let dirOnly = false;
  while (p.endsWith('/')) { dirOnly = true; p = p.slice(0, -1); }
  if (!p) return undefined;
  const parts = p.split('/').filter((s) => s !== '');
  if (parts.length === 0) return undefined;
  if (parts.length > 1 && parts[parts.length - 1] === '**') parts.splice(parts.length - 1, 0, '*');
  return {
    text: pattern, anchored: p.includes('/'), dirOnly,
    segs: parts.map((s) => (s === '**' ? /^$/ : segmentRegex(s))), doubleStar: parts.map((s) => s === '**'),
  };
}

// Pattern segments against path segments; `**` matches any run (also none).
function matchSegments(g: Glob, path: string[]): boolean {
  let p = 0, t = 0, starP = -1, starT = 0;
  while (t < path.length) {
    if (p < g.segs.length && g.doubleStar[p]) { starP = p++; starT = t; }
    else if (p < g.segs.length && g.segs[p].test(path[t])) { p++; t++; }
    else if (starP >= 0) { p = starP + 1; t = ++starT; }
    else return false;
  }
  while (p < g.segs.length && g.doubleStar[p]) p++;
  return p === g.segs.length;
}

function globMatches(g: Glob, path: string): boolean {
  const segs = path.split('/').filter((s) => s !== '');
  for (let k = 0; k < segs.length; k++) {
    const last = k + 1 === segs.length;
    if (g.dirOnly && last) break;
    if (g.anchored ? matchSegments(g, segs.slice(0, k + 1)) : g.segs[0].test(segs[k])) return true;
  }
  return false;
}

// The first pattern matching `path` (absolute, or relative to a folder), or undefined.
export function matchingPattern(patterns: readonly string[], path: string, home = ''): string | undefined {
  for (const p of patterns) {
    const g = compile(p, home);
    if (g && globMatches(g, path)) return p;
  }
  return undefined;
}

// Why the document (its file-system path, '' when it has none, and language
// id) is kept from the server, or undefined when it is not.
export function whyPrivate(fsPath: string, languageId: string, exclude: readonly string[],
                           disabledLanguages: readonly string[], folders: readonly string[],
                           home = ''): string | undefined {
  if (disabledLanguages.includes(languageId)) return `language ${languageId} is in quickfill.privacy.disabledLanguages`;
  if (!fsPath) return undefined;
  const path = fsPath.replace(/\\/g, '/');
  const patterns = [...defaultExclude, ...exclude];
  let hit = matchingPattern(patterns, path, home);
  for (const f of folders) {
    if (hit) break;
    const root = f.replace(/\\/g, '/').replace(/\/+$/, '');
    if (root && path.startsWith(root + '/')) hit = matchingPattern(patterns, path.slice(root.length + 1), home);
  }
  return hit ? `it matches the privacy.exclude pattern ${hit}` : undefined;
}
