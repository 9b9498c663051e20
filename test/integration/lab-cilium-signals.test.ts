/**
 * Interrupting a Cilium lab: SIGINT in the middle of a run leaves nothing of
 * Cilium behind; a Cilium lab killed with SIGKILL (its cilium-agents, control
 * plane, cgroups and pinned programs still there) is removed by the next
 * `cni-bench lab cleanup` (the next lab run calls the same code); a
 * cilium-agent killed in the middle of a run (a failure the lab did not cause)
 * is reported, and the lab still leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  attachedPrograms,
  ciliumLeftovers,
  labIdOfPid,
  labIdProcesses,
  labNetnsProcesses,
  liveProgramIds,
  NOTHING_LEFT,
} from '../support/helpers/cilium-state.js';
import { rootLinks } from '../support/helpers/host-state.js';
import { CLI_MAIN, type Proc, startNode, waitFor } from '../support/helpers/procs.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-cilium-sig-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * `cni-bench lab` on a 2-node Cilium lab with rounds of `durationS`, plus `extra` flags, once its run is measuring
 * (a load generator matching `tools` runs in one of the lab's namespaces: its command line names no lab path);
 * returns its id and the programs Cilium attached.
 */
async function measuringLab(
  dataplane: string,
  durationS = 30,
  extra: string[] = [],
  tools = /iperf3 -c|wrk -t|fortio load|sockperf/,
): Promise<{ lab: Proc; id: string; programs: number[] }> {
  const lab = startNode(
    CLI_MAIN,
    [
      'lab',
      '--dataplane',
      dataplane,
      '--nodes',
      '2',
      '--duration',
      String(durationS),
      '--warmup',
      '0',
      '--db',
      join(tmp, `${dataplane}-${durationS}.db`),
      ...extra,
    ],
    { CNI_BENCH_LOG_LEVEL: 'info' },
  );
  const id = await waitFor('the lab state file', () => labIdOfPid(lab.child.pid ?? -1), 60_000, 100);
  await waitFor(
    'the run to be measuring',
    () =>
      lab.child.exitCode !== null ||
      (/"msg":"run started"/.test(lab.output()) && labNetnsProcesses(id).some((p) => tools.test(p))),
    600_000,
    300,
  ).catch((err: Error) => {
    lab.child.kill('SIGKILL');
    throw err;
  });
  assert.equal(lab.child.exitCode, null, `lab exited early:\n${lab.output().slice(-4000)}`);
  return { lab, id, programs: [0, 1].flatMap((n) => attachedPrograms(id, n).cgroup) };
}

test('SIGINT in the middle of a Cilium lab run leaves nothing of Cilium behind', {
  skip: notRoot,
  timeout: 900_000,
}, async () => {
  const links = rootLinks();
  const { lab, id, programs } = await measuringLab('cilium-vxlan');
  assert.ok(programs.length > 0, 'Cilium attached programs to the nodes');
  lab.child.kill('SIGINT');
  assert.equal(await lab.exited, 130, lab.output().slice(-4000));
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
  assert.deepEqual(liveProgramIds(programs), []);
  assert.equal(rootLinks(), links);
});

test('a Cilium lab killed with SIGKILL is removed by the next cleanup', {
  skip: notRoot,
  timeout: 900_000,
}, async () => {
  const links = rootLinks();
  const { lab, id, programs } = await measuringLab('cilium');
  assert.ok(programs.length > 0, 'Cilium attached programs to the nodes');
  lab.child.kill('SIGKILL');
  await lab.exited;
  const left = ciliumLeftovers(id);
  assert.ok(
    left.namespaces!.length > 0 && left.cgroup!.length > 0,
    'SIGKILL leaves namespaces and cgroups (nothing runs on SIGKILL)',
  );
  assert.ok(
    left.processes!.some((p) => /cilium-agent/.test(p)),
    'and the cilium-agents',
  );
  assert.ok(liveProgramIds(programs).length > 0, 'and their programs');
  const cleanup = startNode(CLI_MAIN, ['lab', 'cleanup']);
  assert.equal(await cleanup.exited, 0, cleanup.output());
  assert.match(cleanup.output(), /removed \d+ leftover lab/);
  await waitFor('the lab processes gone', () => labIdProcesses(id).length === 0, 10_000);
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
  await waitFor('the programs Cilium attached freed', () => liveProgramIds(programs).length === 0, 10_000);
  assert.equal(rootLinks(), links);
});

test('a cilium-agent killed in the middle of a run: the lab says so and still leaves nothing behind', {
  skip: notRoot,
  timeout: 900_000,
}, async () => {
  const links = rootLinks();
  const scenario = join(tmp, 'agent-kill.json');
  // One long measurement through a Service, one after it: the kill lands in the first.
  writeFileSync(
    scenario,
    JSON.stringify({
      rounds: 1,
      measurements: [
        { id: 'http-service', kind: 'http', path: 'service', connections: 4, threads: 1 },
        { id: 'rr-pod', kind: 'rr', path: 'pod-to-pod' },
      ],
    }),
  );
  const { lab, id, programs } = await measuringLab(
    'cilium',
    20,
    // A loaded machine starts three agents slowly.
    ['--scenario', scenario, '--agent-wait', '120', '--json'],
    /iperf3 -c|wrk -t|fortio load|http-open-loop|sockperf/,
  );
  // The client node's cilium-agent, by the pid file it writes in its own /run/cilium.
  const pid = Number(readFileSync(`/run/cni-bench/${id}/cilium/n1/cilium/cilium.pid`, 'utf8').trim());
  assert.ok(pid > 1, 'the agent wrote its pid');
  process.kill(pid, 'SIGKILL');
  const code = await lab.exited;
  assert.ok(code === 0 || code === 1, `the lab ends on its own (exit ${code}):\n${lab.output().slice(-4000)}`);
  assert.match(lab.output(), /cilium-agent on lab-n1 exited \(code 137\) while the lab ran/);
  assert.deepEqual(ciliumLeftovers(id), NOTHING_LEFT);
  await waitFor('the programs Cilium attached freed', () => liveProgramIds(programs).length === 0, 10_000);
  assert.equal(rootLinks(), links);
});
