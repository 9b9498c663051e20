import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  cpuMillicores,
  type ProcStat,
  parseProcStat,
  parseProcStatus,
  parseProcUptime,
} from '../../../../agent/samplers/proc.js';
import { PhaseCpuSummary, type ProcessSample, ProcessSampler } from '../../../../agent/samplers/process-sampler.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const proc = (name: string): string => fixture(`proc/${name}`);

// Expected values are what `ps -o pid,comm,rss,nlwp -p <pid>` printed at capture
// time (run just before and just after the two `cat`s; see test/fixtures/proc/README.md).
// ps's RSS is in KiB, as is status's VmRSS. starttime and state are from the stat line itself.
const captured = [
  { file: 'bash', pid: 4704, comm: 'bash', state: 'S', rssKiB: 3044, nlwp: 1, startTimeTicks: 36407 },
  { file: 'odd-comm', pid: 4901, comm: 'my (odd) name', state: 'S', rssKiB: 1664, nlwp: 1, startTimeTicks: 38507 },
  { file: 'kthreadd', pid: 2, comm: 'kthreadd', state: 'S', rssKiB: 0, nlwp: 1, startTimeTicks: 14 },
  { file: 'zombie', pid: 4937, comm: 'sleep', state: 'Z', rssKiB: 0, nlwp: 1, startTimeTicks: 38914 },
];

for (const c of captured) {
  test(`/proc/<pid>/stat and status of ${c.file} match what ps printed`, () => {
    const stat = parseProcStat(proc(`${c.file}-stat.txt`));
    assert.deepEqual(stat, {
      pid: c.pid,
      comm: c.comm,
      state: c.state,
      utimeTicks: 0,
      stimeTicks: 0,
      startTimeTicks: c.startTimeTicks,
      numThreads: c.nlwp,
    });
    assert.deepEqual(parseProcStatus(proc(`${c.file}-status.txt`)), {
      name: c.comm,
      vmRssBytes: c.rssKiB * 1024,
      threads: c.nlwp,
    });
  });
}

test('a multi-threaded node reading its own /proc/self: 7 threads, comm MainThread, RSS between the two ps readings', () => {
  // ps printed `4745 MainThread 45760 7` before and `4745 MainThread 46084 7` after (the process was running).
  const stat = parseProcStat(proc('node-self-stat.txt'));
  assert.deepEqual(stat, {
    pid: 4745,
    comm: 'MainThread',
    state: 'R',
    utimeTicks: 2,
    stimeTicks: 3,
    startTimeTicks: 36898,
    numThreads: 7,
  });
  const status = parseProcStatus(proc('node-self-status.txt'));
  assert.equal(status.name, 'MainThread');
  assert.equal(status.threads, 7);
  assert.ok(status.vmRssBytes >= 45760 * 1024 && status.vmRssBytes <= 46084 * 1024, `${status.vmRssBytes}`);
});

test('comm is cut at the last parenthesis, so ") S 1 2" inside a name cannot shift the fields', () => {
  const real = proc('bash-stat.txt');
  const s = parseProcStat(real.replace('(bash)', '(a) S 9 9 (b)'));
  assert.equal(s.comm, 'a) S 9 9 (b');
  assert.equal(s.startTimeTicks, 36407);
});

test('a truncated or malformed stat line is a parse error naming /proc/<pid>/stat', () => {
  const isStatParse = (err: unknown): boolean =>
    isCniBenchError(err, 'E_PARSE') && err.message.startsWith('/proc/<pid>/stat:');
  assert.throws(() => parseProcStat(proc('truncated-stat.txt')), isStatParse);
  assert.throws(() => parseProcStat(''), isStatParse);
  assert.throws(() => parseProcStat('4704 bash S 1 2 3'), isStatParse);
  assert.throws(() => parseProcStat(proc('bash-stat.txt').replace(') S ', ') SS ')), isStatParse);
  assert.throws(() => parseProcStat(proc('bash-stat.txt').replace(' 36407 ', ' -1 ')), isStatParse);
});

test('status without VmRSS is an error unless zombie or kernel thread', () => {
  // Derived from the bash capture: its VmRSS line removed (VmSize and State S remain).
  const noRss = proc('bash-status.txt').replace(/^VmRSS:.*\n/m, '');
  assert.throws(
    () => parseProcStatus(noRss),
    (err) => isCniBenchError(err, 'E_PARSE') && /VmRSS/.test(err.message),
  );
  assert.throws(
    () => parseProcStatus(''),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('/proc/<pid>/status:'),
  );
  assert.throws(
    () => parseProcStatus(proc('bash-status.txt').replace(/^VmRSS:.*$/m, 'VmRSS:\t3044 MB')),
    (err) => isCniBenchError(err, 'E_PARSE'),
  );
});

test('/proc/uptime', () => {
  assert.equal(parseProcUptime(proc('uptime.txt')), 422.39);
  assert.throws(
    () => parseProcUptime('422.39\n'),
    (err) => isCniBenchError(err, 'E_PARSE'),
  );
});

test('cpuMillicores: ticks over wall time, and a reused pid is refused', () => {
  const prev: ProcStat = parseProcStat(proc('node-self-stat.txt'));
  const cur: ProcStat = { ...prev, utimeTicks: prev.utimeTicks + 60, stimeTicks: prev.stimeTicks + 15 };
  assert.equal(cpuMillicores(prev, cur, 1000), 750);
  assert.equal(cpuMillicores(prev, cur, 500), 1500);
  assert.equal(cpuMillicores(prev, cur, 1000, 250), 300);
  assert.equal(cpuMillicores(prev, prev, 1000), 0);
  assert.throws(
    () => cpuMillicores(prev, { ...cur, startTimeTicks: prev.startTimeTicks + 1 }, 1000),
    (err) => isCniBenchError(err, 'E_VALIDATION') && /reused/.test(err.message),
  );
  assert.throws(
    () => cpuMillicores(prev, cur, 0),
    (err) => isCniBenchError(err, 'E_VALIDATION') && /elapsedMs/.test(err.message),
  );
  assert.throws(
    () => cpuMillicores(cur, prev, 1000),
    (err) => isCniBenchError(err, 'E_VALIDATION') && /backwards/.test(err.message),
  );
});

/** A stat line with its utime (field 14) replaced; the rest is the capture. */
function withUtime(stat: string, utime: number): string {
  const close = stat.lastIndexOf(')');
  const rest = stat.slice(close + 2).split(' ');
  rest[11] = String(utime);
  return `${stat.slice(0, close + 2)}${rest.join(' ')}`;
}

test('ProcessSampler on a copy of /proc: matches comm, skips vanished pids, names failed reads, counts new pids', async () => {
  const root = await mkdtemp(join(tmpdir(), 'cnib-proc-'));
  const put = async (pid: number, files: Record<string, string>): Promise<void> => {
    await mkdir(join(root, String(pid)), { recursive: true });
    for (const [f, text] of Object.entries(files)) await writeFile(join(root, String(pid), f), text);
  };
  try {
    await writeFile(join(root, 'uptime'), '380.00 100.00\n'); // before the odd process's start (38507 ticks)
    await writeFile(join(root, 'self'), '');
    await put(4704, { comm: 'bash\n', stat: proc('bash-stat.txt'), status: proc('bash-status.txt') });
    await put(2, { comm: 'kthreadd\n', stat: proc('kthreadd-stat.txt'), status: proc('kthreadd-status.txt') });
    await put(77, { comm: 'bash\n' }); // exited after its comm was read: no stat, no status
    await put(78, { comm: 'bash\n', stat: proc('bash-stat.txt').replace(/^4704 /, '78 ') });
    await mkdir(join(root, '78', 'status')); // a read that fails for another reason (EISDIR)
    // The kernel keeps 15 characters of a longer name (derived from the bash capture, comm renamed).
    await put(4706, {
      comm: 'kube-proxy-very\n',
      stat: proc('bash-stat.txt').replace('4704 (bash)', '4706 (kube-proxy-very)'),
      status: proc('bash-status.txt'),
    });
    const sampler = new ProcessSampler({
      names: ['bash', 'my (odd) name', 'kube-proxy-very-long-name'],
      procRoot: root,
      rescanMs: 0,
    });

    const first = await sampler.sample();
    assert.deepEqual(first.processes, [
      { name: 'bash', pids: [4704], cpuMillicores: undefined, rssBytes: 3044 * 1024, threads: 1 },
      { name: 'my (odd) name', pids: [], cpuMillicores: undefined, rssBytes: 0, threads: 0 },
      { name: 'kube-proxy-very-long-name', pids: [4706], cpuMillicores: undefined, rssBytes: 3044 * 1024, threads: 1 },
    ]);
    assert.equal(first.intervalMs, undefined);
    assert.deepEqual(first.errors, [`${join(root, '78', 'status')}: EISDIR`]);

    // 40 more ticks for bash; the odd process appears, started after the first sample.
    await writeFile(join(root, '4704', 'stat'), withUtime(proc('bash-stat.txt'), 40));
    await put(4901, {
      comm: 'my (odd) name\n',
      stat: withUtime(proc('odd-comm-stat.txt'), 10),
      status: proc('odd-comm-status.txt'),
    });
    await sleep(20);
    const second = await sampler.sample();
    const interval = second.intervalMs ?? 0;
    assert.ok(interval >= 20);
    const [bash, odd] = second.processes;
    assert.ok(Math.abs((bash?.cpuMillicores ?? 0) - 400_000 / interval) < 1e-6, `${bash?.cpuMillicores}`);
    assert.deepEqual(odd?.pids, [4901]);
    assert.ok(Math.abs((odd?.cpuMillicores ?? 0) - 100_000 / interval) < 1e-6, `${odd?.cpuMillicores}`);
    assert.equal(odd?.rssBytes, 1664 * 1024);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('ProcessSampler between full scans reads only the pids it knows, and scans again at once when one is gone', async () => {
  const root = await mkdtemp(join(tmpdir(), 'cnib-proc-'));
  const put = async (pid: number, comm: string, stat: string): Promise<void> => {
    await mkdir(join(root, String(pid)), { recursive: true });
    await writeFile(join(root, String(pid), 'comm'), `${comm}\n`);
    await writeFile(join(root, String(pid), 'stat'), stat);
    await writeFile(join(root, String(pid), 'status'), proc('bash-status.txt'));
  };
  try {
    await writeFile(join(root, 'uptime'), '380.00 100.00\n');
    await put(4704, 'bash', proc('bash-stat.txt'));
    const sampler = new ProcessSampler({ names: ['bash'], procRoot: root, rescanMs: 60_000 });
    assert.deepEqual((await sampler.sample()).processes[0]?.pids, [4704]);
    // A second bash appears: not seen until the next full scan (no pid's comm is read in between).
    await put(4800, 'bash', proc('bash-stat.txt').replace(/^4704 /, '4800 '));
    assert.deepEqual((await sampler.sample()).processes[0]?.pids, [4704]);
    // The known one exits: that sample scans again and finds the other.
    await rm(join(root, '4704'), { recursive: true });
    assert.deepEqual((await sampler.sample()).processes[0]?.pids, [4800]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("ProcessSampler with a node's netns counts only that namespace's processes (one cilium-agent per lab node on one kernel)", async () => {
  const root = await mkdtemp(join(tmpdir(), 'cnib-proc-'));
  const put = async (pid: number, netnsLink: string | undefined): Promise<void> => {
    await mkdir(join(root, String(pid), 'ns'), { recursive: true });
    await writeFile(join(root, String(pid), 'comm'), 'cilium-agent\n');
    await writeFile(
      join(root, String(pid), 'stat'),
      proc('bash-stat.txt').replace('4704 (bash)', `${pid} (cilium-agent)`),
    );
    await writeFile(join(root, String(pid), 'status'), proc('bash-status.txt'));
    if (netnsLink) await symlink(netnsLink, join(root, String(pid), 'ns', 'net'));
  };
  try {
    await writeFile(join(root, 'uptime'), '380.00 100.00\n');
    // The node's namespace file; its inode is what /proc/<pid>/ns/net names for processes inside it.
    const nodeNs = join(root, 'node-netns');
    await writeFile(nodeNs, '');
    const ino = (await stat(nodeNs)).ino;
    await put(100, `net:[${ino}]`);
    await put(200, `net:[${ino + 1}]`);
    await put(300, undefined); // namespace unreadable: counted rather than lost
    const mine = new ProcessSampler({ names: ['cilium-agent'], procRoot: root, rescanMs: 0, netns: nodeNs });
    assert.deepEqual((await mine.sample()).processes[0]?.pids, [100, 300]);
    const all = new ProcessSampler({ names: ['cilium-agent'], procRoot: root, rescanMs: 0 });
    assert.deepEqual((await all.sample()).processes[0]?.pids, [100, 200, 300]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('PhaseCpuSummary: time-weighted average, max CPU and max RSS per name', () => {
  const s = (intervalMs: number | undefined, cpu: number | undefined, rss: number): ProcessSample => ({
    timeMs: 0,
    intervalMs,
    errors: [],
    processes: [{ name: 'kube-proxy', pids: [1], cpuMillicores: cpu, rssBytes: rss, threads: 5 }],
  });
  const phase = new PhaseCpuSummary();
  assert.deepEqual(phase.result(), []);
  phase.add(s(undefined, undefined, 900));
  phase.add(s(1000, 100, 1000));
  phase.add(s(3000, 500, 800));
  assert.deepEqual(phase.result(), [
    { name: 'kube-proxy', samples: 2, avgMillicores: 400, maxMillicores: 500, maxRssBytes: 1000 },
  ]);
});

test('ProcessSampler on the real /proc finds a busy node child and its CPU rate', async () => {
  // Right after exec the comm is "node" (the file's name); Node 24 then renames
  // its main thread, and so the process, "MainThread". Setting process.title
  // renames it back (prctl PR_SET_NAME); the child says "ready" only after that.
  // Pipes are synchronous on Linux, so "ready" is written before the loop starts.
  const child = spawn(process.execPath, ['-e', "process.title = 'node'; console.log('ready'); for (;;) {}"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const pid = child.pid;
    assert.ok(pid !== undefined);
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`busy child exited early (${code})`)));
    });
    assert.equal(await readFile(`/proc/${pid}/comm`, 'utf8'), 'node\n');
    const sampler = new ProcessSampler({ names: ['node'] });
    const first = await sampler.sample();
    assert.ok(first.processes[0]?.pids.includes(pid), JSON.stringify(first));
    await sleep(1000);
    const second = await sampler.sample();
    const node = second.processes[0];
    assert.equal(node?.name, 'node');
    assert.ok(node.pids.includes(pid), JSON.stringify(second));
    assert.ok((node.cpuMillicores ?? 0) > 300, `cpuMillicores ${node.cpuMillicores}`);
    assert.ok(node.rssBytes > 0 && node.threads >= 1);
    assert.deepEqual(second.errors, []);
  } finally {
    child.kill('SIGKILL');
  }
});
