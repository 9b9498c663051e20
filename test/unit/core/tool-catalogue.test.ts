/**
 * The tool catalogue against what it is derived into and what cannot import
 * it: scripts/setup.sh (bash, runs before npm install) and the Dockerfile must
 * install exactly the catalogue's Debian packages (plus what they need for
 * themselves) and build its other binaries; and the facts must agree with each
 * other and with the drivers.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { clientDrivers, serverDrivers } from '../../../agent/drivers/registry.js';
import { run } from '../../../core/process.js';
import { BINARIES, CLIENTS, findTool, SERVERS, TOOLS } from '../../../core/tool-catalogue/index.js';
import { aptPackages, parseDockerfile } from '../../support/helpers/dockerfile-parse.js';
import { repoRoot } from '../../support/helpers/fixtures.js';

/** Packages a list installs for its own sake, not for a tool: TLS roots for the image; git and openssl for setup's builds and the tests' PKI. */
const DOCKERFILE_OWN = ['ca-certificates'];
const SETUP_OWN = ['git', 'openssl'];

const catalogued = [...new Set(BINARIES.flatMap((b) => (b.source.debian ? [b.source.debian] : [])))].sort();

async function essential(): Promise<Set<string>> {
  const r = await run('dpkg-query', ['-W', '-f', '${Package}\t${Essential}\n'], {
    tool: 'dpkg-query',
    timeoutMs: 10_000,
  });
  return new Set(
    r.stdout
      .split('\n')
      .filter((l) => l.endsWith('\tyes'))
      .map((l) => l.split('\t')[0]!),
  );
}

/** The words of setup.sh's `packages=(...)` line. */
export function setupPackages(script: string): string[] {
  const m = /^packages=\(([^)]*)\)$/m.exec(script);
  assert.ok(m, "scripts/setup.sh has no 'packages=(...)' line");
  return m[1]!.split(/\s+/).filter(Boolean);
}

/** What a list lacks of the catalogue (Essential packages every Debian has may be left out) and what it has beyond it and its own. */
async function disagreement(listed: string[], own: string[]): Promise<{ missing: string[]; extra: string[] }> {
  const base = await essential();
  return {
    missing: catalogued.filter((p) => !listed.includes(p) && !base.has(p)),
    extra: listed.filter((p) => !catalogued.includes(p) && !own.includes(p)).sort(),
  };
}

test("scripts/setup.sh installs the catalogue's Debian packages, and no others but its own", async () => {
  const listed = setupPackages(readFileSync(`${repoRoot}scripts/setup.sh`, 'utf8'));
  assert.deepEqual(await disagreement(listed, SETUP_OWN), { missing: [], extra: [] });
  // It fails when they part: a package dropped, one no tool needs added.
  const drifted = await disagreement([...listed.filter((p) => p !== 'sockperf'), 'apache2-utils'], SETUP_OWN);
  assert.deepEqual(drifted, { missing: ['sockperf'], extra: ['apache2-utils'] });
});

test('scripts/setup.sh runs the script of every catalogue binary that is not a plain Debian package', () => {
  const script = readFileSync(`${repoRoot}scripts/setup.sh`, 'utf8');
  const runs = (s: string, path: string): boolean =>
    new RegExp(`^\\s*bash ${path.replaceAll('.', '\\.')}\\b`, 'm').test(s);
  for (const { binary, source } of BINARIES) {
    if (source.build === undefined) continue;
    assert.ok(runs(script, source.build), `${binary}: scripts/setup.sh never runs ${source.build}`);
  }
  // It fails when setup stops running one (as it once did with netperf, so TCP_CRR fell back to the built-in).
  assert.equal(runs(script.replace('bash scripts/install-netperf.sh', ''), 'scripts/install-netperf.sh'), false);
});

test("the Dockerfile's final stage installs the catalogue's Debian packages and copies every built binary from its stage", async () => {
  const stages = parseDockerfile(readFileSync(`${repoRoot}Dockerfile`, 'utf8'));
  const final = stages.at(-1)!;
  assert.deepEqual(await disagreement(aptPackages(final), DOCKERFILE_OWN), { missing: [], extra: [] });
  for (const { binary, source } of BINARIES) {
    if (source.build === undefined) continue;
    assert.ok(existsSync(`${repoRoot}${source.build}`), `${binary}: build script ${source.build} missing`);
    assert.ok(
      stages.some((s) => s.name === source.dockerStage),
      `${binary}: no Dockerfile stage '${source.dockerStage}'`,
    );
    const copy = final.instructions.find(
      (i) =>
        i.keyword === 'COPY' &&
        i.args.startsWith(`--from=${source.dockerStage} `) &&
        new RegExp(`/${binary}(\\s|$)`).test(i.args),
    );
    assert.ok(copy, `${binary}: the final stage does not COPY it from stage '${source.dockerStage}'`);
  }
});

test('every client and server has a driver, every driver a catalogue entry', async () => {
  assert.deepEqual([...clientDrivers.keys()].sort(), CLIENTS.map((t) => t.name).sort());
  assert.deepEqual([...serverDrivers.keys()].sort(), SERVERS.map((t) => t.name).sort());
  // The registry finds drivers by file name: a driver file the catalogue does not list would never run.
  const dir = new URL('../../../agent/drivers/', import.meta.url);
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const mod: Record<string, unknown> = await import(new URL(f, dir).href);
    for (const v of Object.values(mod)) {
      if (typeof v !== 'object' || v === null || !('buildClientArgs' in v || 'buildServerArgs' in v)) continue;
      const tool = String((v as { tool?: unknown }).tool);
      assert.equal(`${tool}.js`, f, `driver ${tool} lives in agent/drivers/${f}, not agent/drivers/${tool}.ts`);
      assert.ok(findTool(tool), `driver ${tool} (agent/drivers/${f}) has no catalogue entry in TOOLS`);
    }
  }
});

test('the facts agree with each other', () => {
  const names = TOOLS.map((t) => t.name);
  assert.deepEqual(names, [...new Set(names)], 'a tool name twice');
  const binaries = BINARIES.map((b) => b.binary);
  assert.deepEqual(binaries, [...new Set(binaries)], 'a binary twice');
  for (const t of TOOLS) {
    assert.equal(t.builtIn, t.binary === undefined, `${t.name}: a built-in has no binary, a native tool has one`);
    assert.ok(t.client || t.server, `${t.name}: neither client nor server`);
  }
  for (const t of CLIENTS) {
    const server = t.client.serverTool === undefined ? undefined : findTool(t.client.serverTool);
    if (t.client.kind === 'http')
      assert.equal(t.client.serverTool, undefined, `${t.name}: HTTP clients take the scenario's server`);
    else
      assert.ok(
        server?.server?.serves === t.client.kind || server?.server?.alsoServes?.includes(t.client.kind),
        `${t.name}: its server ${t.client.serverTool} does not serve ${t.client.kind}`,
      );
    // A second (data) port goes through a Service only one above the control port (the Service fronts both; collector/runs/measure-phase.ts).
    if (server?.server?.dataPort !== undefined && t.client.throughService)
      assert.equal(server.server.dataPort, server.server.port + 1, t.name);
    if (t.builtIn)
      assert.ok(
        t.client.autoRank === null ||
          CLIENTS.every(
            (n) => n.builtIn || n.client.kind !== t.client.kind || (n.client.autoRank ?? Infinity) < t.client.autoRank!,
          ),
        `${t.name}: 'auto' must try native tools before a built-in`,
      );
  }
});
