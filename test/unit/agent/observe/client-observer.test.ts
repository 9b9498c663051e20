import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startClientObserver } from '../../../../agent/observe/client-observer.js';
import {
  parseIpLinks,
  parseLinkSpeed,
  parsePortRange,
  parseRouteDev,
  parseSnmpTcp,
  parseSockstat,
  parseTcpTwReuse,
  readPortRange,
} from '../../../../agent/observe/netns-reads.js';
import { parseProcStat } from '../../../../agent/samplers/proc.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { liveChildren, run, spawnLongRunning } from '../../../../core/process.js';
import { evaluateGuards } from '../../../../report/guards.js';
import { fixture, repoRoot } from '../../../support/helpers/fixtures.js';
import { waitFor } from '../../../support/helpers/procs.js';
import { notRoot } from '../../../support/helpers/root.js';

const obs = (name: string): string => fixture(`observe/${name}`);
const parseErrorOf =
  (tool: string) =>
  (err: unknown): boolean =>
    isCniBenchError(err, 'E_PARSE') && err.message.startsWith(`${tool}:`);

test('snmp Tcp counters of the client namespace after a 3 s short-connection wrk (29,161 requests)', () => {
  const t = parseSnmpTcp(obs('snmp-client-after-wrk.txt'));
  assert.deepEqual(
    { ...t, fields: undefined },
    {
      activeOpens: 29178,
      passiveOpens: 0,
      attemptFails: 0,
      estabResets: 8,
      currEstab: 0,
      inSegs: 132795,
      outSegs: 159983,
      retransSegs: 0,
      inErrs: 0,
      outRsts: 8,
      fields: undefined,
    },
  );
  // MaxConn is signed: the kernel prints -1.
  assert.equal(t.fields.MaxConn, -1);
  assert.equal(t.fields.InCsumErrors, 0);
  const host = parseSnmpTcp(obs('snmp-host.txt'));
  assert.equal(host.retransSegs, 139);
  assert.equal(host.outSegs, 315187);
});

test('the kernel counts no EADDRNOTAVAIL: wrk reported 16 connect errors with a 1,000-port range, no Tcp failure counter moved', () => {
  assert.match(obs('wrk-ports-exhausted.txt'), /Socket errors: connect 16,/);
  const before = parseSnmpTcp(obs('snmp-ports-exhausted-before.txt'));
  const afterRun = parseSnmpTcp(obs('snmp-ports-exhausted-after.txt'));
  assert.equal(afterRun.attemptFails - before.attemptFails, 0);
  assert.equal(afterRun.estabResets - before.estabResets, 0);
  assert.equal(afterRun.activeOpens - before.activeOpens, 3839);
  // Meanwhile TIME_WAIT filled the whole range.
  assert.equal(
    parseSockstat(obs('sockstat-ports-exhausted.txt')).tcpTimeWait,
    parsePortRange(obs('ip-local-port-range-small.txt')),
  );
});

test('a truncated or foreign snmp is a parse error naming /proc/net/snmp', () => {
  const isSnmp = parseErrorOf('/proc/net/snmp');
  assert.throws(() => parseSnmpTcp(obs('snmp-truncated.txt')), isSnmp);
  // The complete capture cut right after the last digit of the Tcp value line (no newline): the last number may be cut.
  const full = obs('snmp-client-after-wrk.txt');
  const valuesEnd = full.indexOf('\n', full.indexOf('Tcp: 1 '));
  assert.throws(() => parseSnmpTcp(full.slice(0, valuesEnd)), isSnmp);
  assert.doesNotThrow(() => parseSnmpTcp(full.slice(0, valuesEnd + 1)));
  assert.throws(() => parseSnmpTcp(''), isSnmp);
  assert.throws(() => parseSnmpTcp(obs('sockstat-idle.txt')), isSnmp);
  assert.throws(() => parseSnmpTcp(full.replace(' 29178 ', ' x ')), isSnmp);
});

test('sockstat: idle, during and after a short-connection wrk; tw is per namespace, alloc and mem host-wide', () => {
  assert.deepEqual(parseSockstat(obs('sockstat-idle.txt')), {
    socketsUsed: 0,
    tcpInUse: 0,
    tcpOrphan: 0,
    tcpTimeWait: 0,
    tcpAlloc: 4,
    tcpMemPages: 213,
  });
  assert.deepEqual(parseSockstat(obs('sockstat-during-wrk.txt')), {
    socketsUsed: 15,
    tcpInUse: 15,
    tcpOrphan: 5,
    tcpTimeWait: 5951,
    tcpAlloc: 34,
    tcpMemPages: 0,
  });
  assert.equal(parseSockstat(obs('sockstat-after-wrk.txt')).tcpTimeWait, 14111);
  const isSock = parseErrorOf('/proc/net/sockstat');
  assert.throws(() => parseSockstat(obs('sockstat-truncated.txt')), isSock);
  assert.throws(() => parseSockstat(''), isSock);
  assert.throws(() => parseSockstat(obs('sockstat-idle.txt').replace('tw 0', 'tw')), isSock);
});

test('ip_local_port_range, tcp_tw_reuse and sysfs speed as captured', () => {
  assert.equal(parsePortRange(obs('ip-local-port-range-default.txt')), 28232);
  assert.equal(parsePortRange(obs('ip-local-port-range-small.txt')), 1000);
  assert.throws(
    () => parsePortRange(obs('ip-local-port-range-truncated.txt')),
    parseErrorOf('net.ipv4.ip_local_port_range'),
  );
  assert.throws(() => parsePortRange('60999\t32768\n'), parseErrorOf('net.ipv4.ip_local_port_range'));
  assert.equal(parseTcpTwReuse(obs('tcp-tw-reuse-default.txt')), 2);
  assert.equal(parseTcpTwReuse(obs('tcp-tw-reuse-off.txt')), 0);
  assert.throws(() => parseTcpTwReuse(''), parseErrorOf('net.ipv4.tcp_tw_reuse'));
  // virtio-net reports no speed (-1): unknown.
  assert.equal(parseLinkSpeed(obs('sysfs-speed-virtio.txt')), 0);
  assert.throws(() => parseLinkSpeed(''), parseErrorOf('/sys/class/net/<dev>/speed'));
});

test('ip -j: the route device, and which links are hardware (a bus behind them, no link kind)', () => {
  assert.equal(parseRouteDev(obs('ip-route-get-veth.json')), 'cnibobs-a');
  assert.equal(parseRouteDev(obs('ip-route-default.json')), 'eth0');
  assert.equal(parseRouteDev('[]'), undefined);
  assert.throws(() => parseRouteDev(obs('ip-route-get-veth.json').slice(0, 40)), parseErrorOf('ip -j route'));
  const host = new Map(parseIpLinks(obs('ip-link-host.json')).map((l) => [l.ifname, l]));
  assert.deepEqual(host.get('eth0'), { ifindex: 4, ifname: 'eth0', kind: undefined, parentBus: 'virtio' });
  assert.deepEqual(host.get('ifb0'), { ifindex: 2, ifname: 'ifb0', kind: 'ifb', parentBus: undefined });
  assert.deepEqual(host.get('lo'), { ifindex: 1, ifname: 'lo', kind: undefined, parentBus: undefined });
  const ns = parseIpLinks(obs('ip-link-client-ns.json'));
  assert.deepEqual(
    ns.find((l) => l.ifname === 'cnibobs-a'),
    { ifindex: 8, ifname: 'cnibobs-a', kind: 'veth', parentBus: undefined },
  );
});

test('/proc/<pid>/stat of a running wrk -t2 (main thread + 2 workers) parses with the existing parser', () => {
  // ps printed `8948 wrk 3` (pid comm nlwp) before and after the capture.
  const s = parseProcStat(obs('wrk-stat.txt'));
  assert.deepEqual(
    { pid: s.pid, comm: s.comm, state: s.state, threads: s.numThreads, ticks: s.utimeTicks + s.stimeTicks },
    { pid: 8948, comm: 'wrk', state: 'S', threads: 3, ticks: 47 },
  );
});

/**
 * Busy for 1 s of wall time, then prints the CPU it got over its own run: on
 * a loaded machine it gets less than a core, and the observer must see the same.
 */
const BUSY_1S =
  'const t0 = Date.now(); while (Date.now() < t0 + 1000); const u = process.cpuUsage(); console.log((u.user + u.system) / 1000 / (Date.now() - t0));';

/** The observer's rate against what the busy child itself counted (load moves both alike). */
function assertCoresNear(observed: number, childStdout: string, notes: string[]): void {
  const own = Number(childStdout.trim());
  assert.ok(Number.isFinite(own) && own > 0.2, `the busy child printed '${childStdout}'`);
  assert.ok(
    Math.abs(observed - own) <= 0.25,
    `observer ${observed.toFixed(2)} cores, the child counted ${own.toFixed(2)}; notes ${notes.join(' | ')}`,
  );
}

test('a real busy child: about one core, and stop() after it exited keeps the last reading', async () => {
  const child = spawnLongRunning(process.execPath, ['-e', BUSY_1S]);
  assert.ok(child.pid);
  const observer = startClientObserver({ pid: child.pid, threads: 1, cpus: availableParallelism(), intervalMs: 100 });
  const ended = await child.exited;
  await sleep(700); // well past the exit: a rate over the wall time to stop() would be ~0.6 of the child's
  const { observation, notes } = await observer.stop();
  assertCoresNear(observation.cpuCores, ended.stdout, notes);
  assert.equal(observation.cpuCapacityCores, 1);
  // The child ran in this process's namespace, whose sysctls are read directly.
  assert.equal(observation.ephemeralPorts, await readPortRange());
  assert.equal(observation.connectErrors, 0);
  assert.ok(!notes.some((n) => /cpu|poll|stat/.test(n)), notes.join(' | '));
  // stop() is idempotent.
  assert.deepEqual(await observer.stop(), { observation, notes });
});

test('CPU of descendants counts: an idle `timeout` whose child is busy', async () => {
  const child = spawnLongRunning('timeout', ['10', process.execPath, '-e', BUSY_1S]);
  assert.ok(child.pid);
  const observer = startClientObserver({ pid: child.pid, threads: 4, cpus: 2, intervalMs: 100 });
  const ended = await child.exited;
  const { observation, notes } = await observer.stop();
  assertCoresNear(observation.cpuCores, ended.stdout, notes);
  assert.equal(observation.cpuCapacityCores, 2);
});

test('a pid that is already gone: stop() resolves with zeros and says why', async () => {
  const r = await run(process.execPath, ['-e', 'console.log(process.pid)']);
  const observer = startClientObserver({ pid: Number(r.stdout.trim()), threads: 1, cpus: 1 });
  const { observation, notes } = await observer.stop();
  assert.equal(observation.cpuCores, 0);
  assert.ok(
    notes.some((n) => n.startsWith('cpu: fewer than two readings')),
    notes.join(' | '),
  );
  assert.ok(
    notes.some((n) => n.startsWith('network namespace:')),
    notes.join(' | '),
  );
});

// Namespaces of this test only; deleted in after() even when the test fails.
const NS_A = 'cnibfix-obst-a';
const NS_B = 'cnibfix-obst-b';
const ip = (...args: string[]) => run('ip', args, { timeoutMs: 10_000 });
after(async () => {
  for (const ns of [NS_A, NS_B]) await run('ip', ['netns', 'del', ns], { okExitCodes: [0, 1] }).catch(() => undefined);
  assert.equal(liveChildren(), 0);
});

test('wrk with short connections in a namespace of 1,000 ports: TIME_WAIT peak, sysctls and counters of that namespace', {
  skip: notRoot,
  timeout: 60_000,
}, async () => {
  await ip('netns', 'add', NS_A);
  await ip('netns', 'add', NS_B);
  await ip('link', 'add', 'cnibobst-a', 'netns', NS_A, 'type', 'veth', 'peer', 'name', 'cnibobst-b', 'netns', NS_B);
  await ip('-n', NS_A, 'addr', 'add', '198.18.200.1/24', 'dev', 'cnibobst-a');
  await ip('-n', NS_B, 'addr', 'add', '198.18.200.2/24', 'dev', 'cnibobst-b');
  for (const [ns, dev] of [
    [NS_A, 'cnibobst-a'],
    [NS_B, 'cnibobst-b'],
  ] as const) {
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', ns, 'link', 'set', dev, 'up');
  }
  await run('ip', [
    'netns',
    'exec',
    NS_A,
    'sysctl',
    '-q',
    '-w',
    'net.ipv4.ip_local_port_range=40000 40999',
    'net.ipv4.tcp_tw_reuse=0',
  ]);
  const server = spawnLongRunning('ip', [
    'netns',
    'exec',
    NS_B,
    process.execPath,
    `${repoRoot}dist/agent/builtins/http-echo.js`,
    '--port',
    '8080',
  ]);
  try {
    await waitFor(
      'echo server',
      async () => /:8080\b/.test((await run('ip', ['netns', 'exec', NS_B, 'ss', '-ltnH'])).stdout),
      10_000,
    );
    // Under `ip netns exec` the pid moves into the namespace just before exec, as under nsenter.
    const wrk = spawnLongRunning('ip', [
      'netns',
      'exec',
      NS_A,
      'wrk',
      '-t1',
      '-c8',
      '-d2s',
      '-H',
      'Connection: close',
      'http://198.18.200.2:8080/',
    ]);
    assert.ok(wrk.pid);
    const observer = startClientObserver({
      pid: wrk.pid,
      threads: 1,
      cpus: 2,
      netnsPath: `/run/netns/${NS_A}`,
      targetHost: '198.18.200.2',
    });
    const out = await wrk.exited;
    const { observation: o, notes } = await observer.stop();
    const why = `${JSON.stringify(o)}; notes ${notes.join(' | ')}; wrk ${out.stdout}`;
    assert.equal(o.ephemeralPorts, 1000, why);
    assert.equal(o.tcpTwReuse, false, why);
    assert.ok(o.timeWaitPeak >= 800 && o.timeWaitPeak <= 1000, why);
    assert.ok(o.tcpOutSegs > 1000, why);
    assert.ok(o.cpuCores > 0 && o.cpuCores <= 1.1, why);
    assert.equal(o.linkSpeedMbps, 0, why);
    assert.ok(notes.includes('link speed unknown: cnibobst-a is a veth device'), why);
    const guards = evaluateGuards({
      result: {
        jobId: 'j',
        runId: 'r',
        tool: 'wrk',
        toolVersion: '',
        measurement: undefined,
        rawOutput: '',
        startedMs: 0,
        endedMs: 0,
        warnings: [],
        observation: o,
        round: 0,
      },
      rounds: 3,
    });
    assert.deepEqual(
      guards.map((g) => g.code),
      ['ephemeral-ports'],
      why,
    );
  } finally {
    await server.stop();
  }
});
