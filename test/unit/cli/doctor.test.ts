/**
 * `cni-bench doctor`: the requirement list's version probes on real captured
 * output, and the real CLI run as a child process against this machine's PATH,
 * an empty PATH, and a PATH of stand-ins that answer no version.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { requirements } from '../../../agent/tools/requirements.js';
import type { DoctorReport } from '../../../cli/doctor-command.js';
import { findOnPath } from '../../../core/process.js';
import { CLI_MAIN, startNode } from '../../support/helpers/procs.js';

const probe = (binary: string) => {
  const r = requirements.find((x) => x.binary === binary);
  assert.ok(r, binary);
  return r.probe;
};

test('the requirement list names each binary once, and says why', () => {
  const names = requirements.map((r) => r.binary);
  assert.deepEqual(names, [...new Set(names)]);
  for (const r of requirements) assert.ok(r.why.length > 10, r.binary);
  for (const b of ['iperf3', 'fortio', 'nsenter', 'iptables-legacy-save', 'iptables-nft-save', 'nft', 'bpftool'])
    assert.ok(requirements.find((r) => r.binary === b)?.required, b);
});

test("doctor's own version probes read the tools' real answers (Debian bookworm, netperf 2.7.0)", () => {
  assert.equal(probe('nsenter').parse('nsenter from util-linux 2.38.1\n'), '2.38.1');
  assert.equal(probe('ip').parse('ip utility, iproute2-6.1.0, libbpf 1.1.2\n'), '6.1.0');
  assert.equal(probe('tc').parse('tc utility, iproute2-6.1.0, libbpf 1.1.2\n'), '6.1.0');
  assert.equal(probe('iptables-legacy-save').parse('iptables-save v1.8.9 (legacy)\n'), '1.8.9');
  assert.equal(probe('iptables-nft-save').parse('iptables-nft-save v1.8.9 (nf_tables)\n'), '1.8.9');
  assert.equal(probe('sysctl').parse('sysctl from procps-ng 4.0.2\n'), '4.0.2');
  assert.equal(probe('ps').parse('ps from procps-ng 4.0.2\n'), '4.0.2');
  assert.equal(
    probe('cat').parse('cat (GNU coreutils) 9.1\nCopyright (C) 2022 Free Software Foundation, Inc.\n'),
    '9.1',
  );
  assert.equal(probe('netserver').parse('Netperf version 2.7.0\n'), '2.7.0');
  assert.equal(probe('ping').parse('ping from iputils 20221126\nlibcap: yes, IDN: yes\n'), '20221126');
  assert.throws(() => probe('sysctl').parse(''), /sysctl/);
});

async function doctor(args: string[], path: string): Promise<{ code: number | null; stdout: string; output: string }> {
  const p = startNode(CLI_MAIN, ['doctor', ...args], { PATH: path });
  const code = await p.exited;
  return { code, stdout: p.stdout(), output: p.output() };
}

const scratch = await mkdtemp(join(tmpdir(), 'cni-bench-doctor-'));
after(() => rm(scratch, { recursive: true, force: true }));

test('doctor --json on this machine: every tool on PATH is found with its version', async () => {
  const path = process.env.PATH ?? '';
  const { code, stdout, output } = await doctor(['--json'], path);
  const report = JSON.parse(stdout) as DoctorReport;
  assert.deepEqual(
    report.tools.map((t) => t.binary),
    requirements.map((r) => r.binary),
  );
  for (const t of report.tools) {
    assert.deepEqual(Object.keys(t).sort(), ['binary', 'error', 'found', 'path', 'required', 'version', 'why']);
    const here = await findOnPath(t.binary, path);
    assert.equal(t.path, here ?? null, t.binary);
    assert.equal(t.found, here !== undefined, t.binary);
    // iputils numbers its releases by date (20221126).
    if (here) assert.match(t.version ?? `(none: ${t.error})`, /^\d+(\.\d+)+$|^\d{8}$/, t.binary);
  }
  const missingRequired = report.tools.filter((t) => t.required && !t.found).map((t) => t.binary);
  assert.deepEqual(report.missingRequired, missingRequired);
  assert.equal(report.ok, missingRequired.length === 0);
  assert.equal(code, report.ok ? 0 : 1, output);
});

test('doctor exits 1 and lists every required tool when PATH has none', async () => {
  const empty = join(scratch, 'empty');
  await mkdir(empty);
  const { code, stdout } = await doctor(['--json'], empty);
  assert.equal(code, 1);
  const report = JSON.parse(stdout) as DoctorReport;
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.missingRequired,
    requirements.filter((r) => r.required).map((r) => r.binary),
  );
  assert.ok(report.tools.every((t) => !t.found && t.path === null && t.version === null));

  const table = await doctor([], empty);
  assert.equal(table.code, 1);
  assert.match(table.stdout, /^tool +need +status +version/);
  assert.match(table.stdout, /^iperf3 +required +MISSING +- +TCP and UDP throughput/m);
  assert.match(table.stdout, /^doctor: required missing: iperf3, fortio, /m);
});

test('doctor exits 0 when every required tool is there, even if none answers a version', async () => {
  const dir = join(scratch, 'stand-ins');
  await mkdir(dir);
  // Not a symlink to true: GNU true answers --version ("true (GNU coreutils) 9.1").
  const silent = join(scratch, 'silent');
  await writeFile(silent, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  for (const r of requirements.filter((x) => x.required)) await symlink(silent, join(dir, r.binary));
  const { code, stdout, output } = await doctor(['--json'], dir);
  assert.equal(code, 0, output);
  const report = JSON.parse(stdout) as DoctorReport;
  assert.equal(report.ok, true);
  assert.deepEqual(
    report.missingOptional,
    requirements.filter((r) => !r.required).map((r) => r.binary),
  );
  for (const t of report.tools.filter((x) => x.required)) {
    assert.equal(t.path, join(dir, t.binary));
    assert.equal(t.version, null);
    assert.match(t.error ?? '', new RegExp(`^${t.binary}: `));
  }
});

test('doctor refuses an unknown option with exit 2', async () => {
  const { code, output } = await doctor(['--bogus'], process.env.PATH ?? '');
  assert.equal(code, 2);
  assert.match(output, /--bogus: unknown flag/);
});
