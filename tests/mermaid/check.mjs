// Parses every ```mermaid block of the markdown on stdin with Mermaid's own parser (mermaid.parse).
import { JSDOM } from 'jsdom';
const { window } = new JSDOM('');
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import('mermaid');
const input = await new Promise((resolve) => { let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => resolve(s)); });
const blocks = [...input.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]);
let failed = 0;
for (const b of blocks) {
  try { const r = await mermaid.parse(b); console.log(`ok ${r.diagramType}`); }
  catch (e) { failed++; console.error(`INVALID:\n${b}\n${e.message}`); }
}
console.log(`${blocks.length} block(s), ${failed} invalid`);
process.exit(failed ? 1 : 0);
