/**
 * Interrupting a lab: SIGINT in the middle of a run leaves no namespace, link,
 * rule, process or state file behind; a lab killed with SIGKILL is cleaned up by
 * the next `cni-bench lab cleanup` (and by the next lab run, which calls the same code).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { labNamespaces, labProcesses, labStateFiles, rootLinks, rootRules } from '../support/helpers/host-state.js';
import { CLI_MAIN, startNode, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-sig-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const longLab = () =>
  startNode(CLI_MAIN, ['lab', '--nodes', '2', '--duration', '30', '--warmup', '0', '--db', join(tmp, 'lab.db')], {
    CNI_BENCH_LOG_LEVEL: 'info',
  });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} in the middle of a lab run leaves nothing behind`, { skip: notRoot, timeout: 120_000 }, async () => {
    const links = rootLinks();
    const rules = rootRules();
    const lab = longLab();
    await waitFor(
      'the run to be measuring',
      () => /"msg":"run started"/.test(lab.output()) && labProcesses().some((p) => /iperf3 -c/.test(p)),
      60_000,
    );
    assert.ok(labNamespaces().length >= 5, 'lab namespaces exist while running');
    lab.child.kill(signal);
    const code = await lab.exited;
    assert.equal(code, signal === 'SIGINT' ? 130 : 143, lab.output());
    assert.match(lab.output(), /cancelled/);
    assert.deepEqual(labNamespaces(), []);
    assert.deepEqual(labProcesses(), []);
    assert.deepEqual(labStateFiles(), []);
    assert.equal(rootLinks(), links);
    assert.equal(rootRules(), rules);
  });
}

test('a lab killed with SIGKILL is removed by the next cleanup', { skip: notRoot, timeout: 120_000 }, async () => {
  const lab = longLab();
  await waitFor('the run to be measuring', () => labProcesses().some((p) => /iperf3 -c/.test(p)), 60_000);
  lab.child.kill('SIGKILL');
  await lab.exited;
  assert.ok(labNamespaces().length > 0, 'SIGKILL leaves namespaces (nothing can run on SIGKILL)');
  assert.ok(labProcesses().length > 0, 'and agents');
  const cleanup = startNode(CLI_MAIN, ['lab', 'cleanup']);
  assert.equal(await cleanup.exited, 0, cleanup.output());
  assert.match(cleanup.output(), /removed 1 leftover lab/);
  assert.deepEqual(labNamespaces(), []);
  await waitFor('lab processes gone', () => labProcesses().length === 0, 5000);
  assert.deepEqual(labStateFiles(), []);
});
