/**
 * The formatter and the linter, run for real: `biome ci` over the tree with
 * biome.json's settings (what `npm run lint` runs). Any diagnostic fails the
 * test and the failure shows them; `npm run format` applies the formatting and
 * the safe fixes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from '../support/helpers/fixtures.js';

const run = promisify(execFile);

test('biome ci (formatter and linter) reports nothing on the tree', async () => {
  const biome = join(repoRoot, 'node_modules', '.bin', 'biome');
  const r = await run(biome, ['ci', '--colors=off', '--max-diagnostics=50', '.'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    (ok) => ({ code: 0, out: `${ok.stdout}${ok.stderr}` }),
    (err: { code?: number | string; stdout?: string; stderr?: string }) => ({
      code: err.code,
      out: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    }),
  );
  assert.equal(
    r.code,
    0,
    `biome ci found problems (npm run format fixes formatting; lint rules need code changes):\n${r.out}`,
  );
  assert.match(r.out, /Checked \d+ files/, `biome ci did not say what it checked:\n${r.out}`);
});
