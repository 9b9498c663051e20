/** bench/findings.ts: the dated file a benchmark writes, with its command and the machine's facts. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINDINGS_DIR, writeFindings } from '../../../bench/findings.js';
import { repoRoot } from '../../support/helpers/fixtures.js';

test('a benchmark writes docs/findings/<date>-<bench>.md with the command, the machine and what it printed', async () => {
  assert.equal(FINDINGS_DIR, join(repoRoot, 'docs', 'findings/'));
  const dir = await mkdtemp(join(tmpdir(), 'cni-bench-findings-'));
  try {
    const path = await writeFindings(
      { bench: 'demo-cost', title: 'Demo cost', body: '| a | b |\n|---|---|\n| 1 | 2 |\n' },
      new Date('2026-12-06T03:04:05Z'),
      dir,
    );
    assert.equal(path, join(dir, '2026-12-06-demo-cost.md'));
    const text = await readFile(path as string, 'utf8');
    assert.match(text, /^# Demo cost \(2026-12-06\)\n/);
    assert.match(text, /Written by `npm run bench:demo-cost.*` at 2026-12-06T03:04:05\.000Z\./);
    assert.ok(text.includes(`kernel ${release()}`));
    assert.match(text, /CPUs \(.+\), [\d.]+ GiB\n- Node v\d+.*; load average at the end [\d.]+, [\d.]+, [\d.]+\n/);
    assert.ok(text.endsWith('| a | b |\n|---|---|\n| 1 | 2 |\n'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
