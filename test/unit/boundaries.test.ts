/**
 * Module boundaries, checked on every source file's imports (static, dynamic,
 * `export ... from`, and scripts started by `new URL(..., import.meta.url)`):
 *
 * - core/ and gen/ are the floor: core imports only gen (and itself).
 * - report/ (reports, statistics, guards, run records) imports only core and gen.
 * - agent/ and collector/ import core, gen and report, never each other.
 * - lab/ imports core, gen, report and the public entries agent/index.ts and collector/index.ts.
 * - cli/ and bench/ import core, gen, report and the public entries of agent, collector and lab.
 * - nothing imports cli/ or bench/ (test/ may import anything).
 *
 * docs/architecture.md describes the same table; change both together.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/helpers/fixtures.js';

const FLOOR = ['core', 'gen', 'report'];
const ENTRIES = { agent: 'agent/index.ts', collector: 'collector/index.ts', lab: 'lab/index.ts' } as const;

/** Per folder: the folders it may import anything from, and the public entries it may import. */
export const RULES: Readonly<Record<string, { folders: readonly string[]; entries: readonly string[] }>> = {
  core: { folders: ['core', 'gen'], entries: [] },
  report: { folders: ['report', 'core', 'gen'], entries: [] },
  agent: { folders: ['agent', ...FLOOR], entries: [] },
  collector: { folders: ['collector', ...FLOOR], entries: [] },
  lab: { folders: ['lab', ...FLOOR], entries: [ENTRIES.agent, ENTRIES.collector] },
  cli: { folders: ['cli', ...FLOOR], entries: Object.values(ENTRIES) },
  bench: { folders: ['bench', ...FLOOR], entries: Object.values(ENTRIES) },
};

const SPECIFIERS = [
  /\b(?:import|export)\s+(?:type\s+)?(?:[\w*\s{},$]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g,
  /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  // Scripts a module starts; assets (not .js) are found from dist/ and lie outside the module tree.
  /\bnew URL\(\s*['"](\.{1,2}\/[^'"]+\.js)['"]\s*,\s*import\.meta\.url\s*\)/g,
];

/** Repository-relative paths (as .ts where they name compiled .js) that a source file imports or starts. */
export function importsOf(file: string, source: string): string[] {
  const out: string[] = [];
  for (const re of SPECIFIERS) {
    for (const m of source.matchAll(re)) {
      const target = posix.normalize(posix.join(posix.dirname(file), m[1] as string));
      out.push(target.endsWith('.js') ? `${target.slice(0, -3)}.ts` : target);
    }
  }
  return out;
}

/** One line per import that crosses a boundary; [] when every import is allowed. */
export function violations(files: ReadonlyMap<string, string>): string[] {
  const bad: string[] = [];
  for (const [file, source] of files) {
    const rule = RULES[file.split('/')[0] as string];
    if (!rule) continue;
    for (const target of importsOf(file, source)) {
      const folder = target.split('/')[0] as string;
      if (rule.folders.includes(folder) || rule.entries.includes(target)) continue;
      const allowed = [...rule.folders.map((f) => `${f}/`), ...rule.entries].join(', ');
      bad.push(`${file} imports ${target}: ${file.split('/')[0]}/ may import only ${allowed}`);
    }
  }
  return bad;
}

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
        files.set(relative(repoRoot, p).split('\\').join('/'), readFileSync(p, 'utf8'));
    }
  };
  for (const folder of Object.keys(RULES)) walk(resolve(repoRoot, folder));
  return files;
}

test('no source file imports across a module boundary', () => {
  const files = sources();
  const count = [...files].reduce((n, [f, s]) => n + importsOf(f, s).length, 0);
  // A walk that found nothing would pass vacuously.
  assert.ok(files.size > 100 && count > 500, `read ${files.size} files with ${count} relative imports`);
  assert.deepEqual(violations(files), []);
});

test('every public entry exists and each folder with rules exists', () => {
  const files = sources();
  for (const entry of Object.values(ENTRIES)) assert.ok(files.has(entry), `${entry} missing`);
  for (const folder of Object.keys(RULES))
    assert.ok(
      [...files.keys()].some((f) => f.startsWith(`${folder}/`)),
      `${folder}/ has no sources`,
    );
});

test('the checker catches each kind of crossing', () => {
  const cases = new Map([
    ['agent/x.ts', "import { Store } from '../collector/store/store.js';"],
    ['collector/x.ts', "import type { Sample } from '../agent/drivers/driver.js';"],
    ['lab/x.ts', "export { RunsApi } from '../collector/runs/runs-api.js';"],
    ['cli/x.ts', "const m = await import('../lab/lab.js');"],
    ['bench/x.ts', "const s = new URL('../agent/servers/http-echo.js', import.meta.url);"],
    ['core/x.ts', "import { summarise } from '../report/stats.js';"],
    ['report/x.ts', "import type { Store } from '../collector/store/store.js';"],
    ['agent/y.ts', "import { main } from '../cli/main.js';"],
  ]);
  const found = violations(cases);
  assert.equal(found.length, cases.size, found.join('\n'));
  for (const file of cases.keys())
    assert.ok(
      found.some((v) => v.startsWith(`${file} imports `)),
      `${file} not caught`,
    );
  const fine = new Map([
    [
      'lab/x.ts',
      "import { startCollector } from '../collector/index.js';\nimport { AGENT_MAIN } from '../agent/index.js';",
    ],
    ['cli/x.ts', "import type { ReportModel } from '../report/report.js';\nimport { Lab } from '../lab/index.js';"],
    ['agent/x.ts', "import { run } from '../core/process.js';\nimport { x } from './y.js';"],
  ]);
  assert.deepEqual(violations(fine), []);
});

test('importsOf resolves relative specifiers to repository paths', () => {
  assert.deepEqual(
    importsOf('lab/a/b.ts', "import { x } from '../../core/errors.js';\nimport type { Y } from './c.js';"),
    ['core/errors.ts', 'lab/a/c.ts'],
  );
});
