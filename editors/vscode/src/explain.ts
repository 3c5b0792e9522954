// quickfill/explainCompletion for the "quickfill: Explain Completion Prompt"
// command: the request's params, a strict reading of its result
// ({format, prompt, tokens, parts: [{kind, origin, text, tokens}], gate?}) and
// the text the command shows (a table of the parts, the confidence gate of each
// trigger kind and where it came from, then the prompt). No `vscode`
// import: unit-tested with node's test runner (test/explain.test.ts).

export const ExplainMethod = 'quickfill/explainCompletion';
// Read-only documents of this scheme hold the explanations.
export const ExplainScheme = 'quickfill-explain';

export interface PromptPart { kind: string; origin: string; text: string; tokens: number }
export interface GateChoice { threshold: number; origin: string }
export interface Explanation {
  format: string; prompt: string; tokens: number; parts: PromptPart[];
  gate?: { automatic?: GateChoice; explicit?: GateChoice };
}

export function explainParams(uri: string, position: { line: number; character: number }) {
  return { textDocument: { uri }, position: { line: position.line, character: position.character } };
}

// The result, or an Error saying what is wrong with it.
export function parseExplanation(result: unknown): Explanation {
  const r = result as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') throw new Error('quickfill/explainCompletion: the answer is not an object');
  if (typeof r.format !== 'string' || typeof r.prompt !== 'string' || typeof r.tokens !== 'number' || !Array.isArray(r.parts))
    throw new Error('quickfill/explainCompletion: the answer lacks format, prompt, tokens or parts');
  const parts = r.parts.map((p: any, i: number) => {
    if (!p || typeof p.kind !== 'string' || typeof p.origin !== 'string' || typeof p.text !== 'string' || typeof p.tokens !== 'number')
      throw new Error(`quickfill/explainCompletion: part ${i} lacks kind, origin, text or tokens`);
    return { kind: p.kind, origin: p.origin, text: p.text, tokens: p.tokens };
  });
  const e: Explanation = { format: r.format, prompt: r.prompt, tokens: r.tokens, parts };
  // The gate (servers before it was reported have none): kept when well-formed.
  const g = r.gate as Record<string, any> | undefined;
  if (g && typeof g === 'object') {
    e.gate = {};
    for (const k of ['automatic', 'explicit'] as const)
      if (g[k] && typeof g[k].threshold === 'number' && typeof g[k].origin === 'string')
        e.gate[k] = { threshold: g[k].threshold, origin: g[k].origin };
  }
  return e;
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

// What the command shows: where it was asked, a table of the parts, the prompt.
export function explanationText(e: Explanation, where: string): string {
  const lines = [
    `quickfill prompt: ${e.format} format, ${e.tokens} tokens in ${e.parts.length} parts`,
    `at ${where}`,
    '',
    `${pad('part', 10)} ${pad('tokens', 7, true)}  origin`,
  ];
  for (const p of e.parts) lines.push(`${pad(p.kind, 10)} ${pad(String(p.tokens), 7, true)}  ${p.origin || '-'}`);
  for (const k of ['automatic', 'explicit'] as const) {
    const g = e.gate?.[k];
    if (g) lines.push(`confidence gate, ${k} triggers: ${g.threshold.toFixed(2)} (${g.origin})`);
  }
  lines.push('', '----- prompt -----', e.prompt, '----- end of prompt -----', '');
  return lines.join('\n');
}
