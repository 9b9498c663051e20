/**
 * Provokes every methodology guard in a real lab and finds the named warning
 * attached to the measurement that caused it: the client's ephemeral ports
 * shrunk and tcp_tw_reuse off (ephemeral-ports), the client node's conntrack
 * table filled with real flows (conntrack-full), uplinks shaped to 300 Mbit/s
 * and declared as the link speed (link-rate), every 200th iperf3 segment
 * dropped at the server pod (retransmits: the token bucket's own drops are
 * not certain, and a CI machine once saw none in 3 s), a path the server answers 404 (errors), one round
 * (few-samples), and a Node client and server busy with 32 RR connections
 * (client- and server-cpu-saturated, thresholds lowered to half a core: on 2
 * shared cores neither can reach 0.9 of one while the other runs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { trapInterrupts } from '../../core/interrupts.js';
import { createLogger } from '../../core/log.js';
import { runInLab } from '../../lab/session.js';
import type { ReportRow } from '../../report/report.js';
import { fillConntrack } from '../support/helpers/fill-conntrack.js';
import { labNamespaces } from '../support/helpers/host-state.js';
import { iptablesLab } from '../support/helpers/lab-options.js';
import { notRoot } from '../support/helpers/root.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-guards-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const scenario = {
  name: 'guards',
  durationSeconds: 2,
  warmupSeconds: 0,
  rounds: 1,
  guardThresholds: { clientCpuShare: 0.5, serverCpuShare: 0.4 },
  measurements: [
    { id: 'shaped', kind: 'throughput', path: 'pod-to-pod', streams: 4, durationSeconds: 3 },
    {
      id: 'missing',
      kind: 'http',
      path: 'pod-to-pod',
      tool: 'wrk',
      server: 'http-echo',
      connections: 4,
      urlPath: '/missing',
    },
    { id: 'busy-rr', kind: 'rr', path: 'pod-to-pod', tool: 'tcp-rr', connections: 32, durationSeconds: 3 },
    {
      id: 'ports',
      kind: 'http',
      path: 'pod-to-pod',
      tool: 'wrk',
      mode: 'short-connection',
      connections: 16,
      durationSeconds: 3,
    },
  ],
};

function codes(row: ReportRow | undefined): string[] {
  return (row?.warnings ?? []).map((w) => w.code);
}

test('every methodology guard fires in the lab on the measurement that provokes it', {
  skip: notRoot,
  timeout: 300_000,
}, async (t) => {
  const log = createLogger({ component: 'test' }, 'warn');
  const interrupts = trapInterrupts(log);
  const ctMax = Number(readFileSync('/proc/sys/net/netfilter/nf_conntrack_max', 'utf8'));
  try {
    const report = await runInLab(
      {
        ...iptablesLab(join(tmp, 'lab.db')),
        linkMbit: 300,
        beforeAgents: async (lab) => {
          const [server, client] = lab.plan.nodes;
          const pod = client?.pods[0];
          assert.ok(server && client && pod);
          // Loss the throughput row cannot avoid: the server pod drops every 200th iperf3
          // segment it receives after the handshakes (this kernel has no netem).
          execFileSync('ip', [
            'netns',
            'exec',
            server.pods[0]?.ns ?? '',
            'iptables',
            '-A',
            'INPUT',
            '-p',
            'tcp',
            '--dport',
            '5201',
            '!',
            '--syn',
            '-m',
            'statistic',
            '--mode',
            'nth',
            '--every',
            '200',
            '--packet',
            '0',
            '-j',
            'DROP',
          ]);
          // A 512-port range without TIME_WAIT reuse: short connections run out within a second.
          execFileSync('ip', [
            'netns',
            'exec',
            pod.ns,
            'sysctl',
            '-q',
            '-w',
            'net.ipv4.ip_local_port_range=40000 40511',
            'net.ipv4.tcp_tw_reuse=0',
          ]);
          // 93% of the table in unreplied UDP flows to the server's pod (they expire after 30 s).
          fillConntrack(client.ns, server.pods[0]?.ip ?? '', Math.ceil(ctMax * 0.93));
        },
      },
      scenario,
      log,
      interrupts.signal,
    );
    assert.ok(report, 'a report');
    const row = (id: string) => report.rows.find((r) => r.id === id);
    for (const r of report.rows) assert.equal(r.status, 'succeeded', `${r.id}: ${r.error}`);
    for (const r of report.rows)
      t.diagnostic(`${r.id} ${r.value} ${r.unit}: ${r.warnings.map((w) => `[${w.code}] ${w.message}`).join(' ')}`);
    assert.ok(
      report.rows.every((r) => codes(r).includes('few-samples')),
      'one round: few-samples everywhere',
    );
    const shaped = row('shaped');
    assert.ok(codes(shaped).includes('conntrack-full'), JSON.stringify(shaped?.warnings));
    assert.ok(codes(shaped).includes('link-rate'), `${shaped?.value} Gbit/s: ${JSON.stringify(shaped?.warnings)}`);
    assert.ok(codes(shaped).includes('retransmits'), JSON.stringify(shaped?.warnings));
    assert.ok(codes(row('missing')).includes('errors'), JSON.stringify(row('missing')?.warnings));
    assert.ok(!codes(row('missing')).includes('ephemeral-ports'), 'keep-alive does not touch the port range');
    assert.ok(codes(row('busy-rr')).includes('client-cpu-saturated'), JSON.stringify(row('busy-rr')?.warnings));
    assert.ok(codes(row('busy-rr')).includes('server-cpu-saturated'), JSON.stringify(row('busy-rr')?.warnings));
    assert.ok(codes(row('ports')).includes('ephemeral-ports'), JSON.stringify(row('ports')?.warnings));
    assert.deepEqual(labNamespaces(), []);
  } finally {
    interrupts.dispose();
  }
});
