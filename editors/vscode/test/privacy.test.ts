// Unit tests of privacy.ts: the globs behave as the server's
// (tests/indexing/test_path_glob.cpp), the default list, languages, folders.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { defaultExclude, matchingPattern, whyPrivate } from '../src/privacy';

test('basename patterns match at any depth, anchored ones from the start', () => {
  const g = ['.env', '.env.*', '*.pem', 'id_rsa*', '**/secrets/**', 'config/prod/*.yaml', 'vault/'];
  assert.equal(matchingPattern(g, '/home/u/p/.env'), '.env');
  assert.equal(matchingPattern(g, 'a/b/.env.production'), '.env.*');
  assert.equal(matchingPattern(g, '/etc/ssl/server.pem'), '*.pem');
  assert.equal(matchingPattern(g, '/home/u/.ssh/id_rsa.pub'), 'id_rsa*');
  assert.equal(matchingPattern(g, '/w/.env/values.py'), '.env');  // a folder takes its contents
  assert.equal(matchingPattern(g, '/w/p/secrets/db.py'), '**/secrets/**');
  assert.equal(matchingPattern(g, 'p/secrets'), undefined);
  assert.equal(matchingPattern(g, 'config/prod/db.yaml'), 'config/prod/*.yaml');
  assert.equal(matchingPattern(g, 'x/config/prod/db.yaml'), undefined);
  assert.equal(matchingPattern(g, 'deep/vault/x.py'), 'vault/');
  assert.equal(matchingPattern(g, 'deep/vault'), undefined);
  assert.equal(matchingPattern(g, 'src/environment.py'), undefined);
  assert.equal(matchingPattern(g, 'pem/readme.md'), undefined);
  assert.equal(matchingPattern(['~/notes.txt'], '/home/u/notes.txt', '/home/u'), '~/notes.txt');
  assert.equal(matchingPattern(['!x.key', '*.key'], 'x.key'), '*.key');  // no negation
  assert.equal(matchingPattern(['a.b'], 'axb'), undefined);  // '.' is literal
});

test('the default list, languages and workspace folders', () => {
  for (const p of ['/w/.env', '/home/u/.aws/credentials', '/home/u/.kube/config', '/w/k.p12', '/home/u/.netrc'])
    assert.ok(whyPrivate(p, 'plaintext', [], [], []), p);
  assert.equal(whyPrivate('/w/src/main.py', 'python', [], [], ['/w']), undefined);
  assert.match(whyPrivate('/w/notes.md', 'markdown', [], ['markdown'], []) ?? '', /disabledLanguages/);
  assert.ok(whyPrivate('/w/p/config/prod.py', 'python', ['config/prod.py'], [], ['/w/p']));
  assert.equal(whyPrivate('/w/q/src/config/prod.py', 'python', ['config/prod.py'], [], ['/w/q']), undefined);
  assert.equal(whyPrivate('', 'python', [], [], []), undefined);
  assert.ok(defaultExclude.includes('.env'));
});

test('the lists travel to the server, and a change of them restarts the client', async () => {
  const { readSettings, serverSettings, classifyChange } = await import('../src/config');
  const s = readSettings((k) => ({ 'privacy.exclude': ['*.secret', 3, ''], 'privacy.disabledLanguages': ['markdown'],
    server: { privacy: { exclude: ['from-object.txt'] } } } as Record<string, unknown>)[k]);
  assert.deepEqual(s.privacyExclude, ['*.secret']);
  assert.deepEqual(serverSettings(s).privacy, { exclude: ['from-object.txt', '*.secret'], disabledLanguages: ['markdown'] });
  const none = readSettings(() => undefined);
  assert.equal(serverSettings(none).privacy, undefined);
  assert.equal(classifyChange(none, { ...none, disabledLanguages: ['markdown'] }), 'restart');
  assert.equal(classifyChange(s, { ...s }), 'none');
});
