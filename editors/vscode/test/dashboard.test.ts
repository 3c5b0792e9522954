// The pure part of the dashboard command (src/dashboard.ts).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { parseReport, dashboardWebviewOptions } from '../src/dashboard';

test('the answer is read strictly', () => {
  assert.equal(parseReport({ html: '<!DOCTYPE html>\n<html></html>' }), '<!DOCTYPE html>\n<html></html>');
  assert.throws(() => parseReport(null), /not an object/);
  assert.throws(() => parseReport({ page: '' }), /has no html/);
  assert.throws(() => parseReport({ html: 'oops' }), /not a page/);
});

test('the webview runs no scripts', () => {
  assert.equal(dashboardWebviewOptions.enableScripts, false);
  assert.equal(dashboardWebviewOptions.enableCommandUris, false);
});
