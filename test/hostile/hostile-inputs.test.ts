/**
 * Hostile and malformed input against the real collector binary on port 0
 * (with an operator token and an agent key, so every check is on), across
 * REST, gRPC AgentService, RunService and MonitorService, scenario files and
 * flags of the real CLI and collector, and tool outputs fed to every driver's
 * parser. Seeded and bounded (HOSTILE_SEED picks another seed). For each:
 * no crash, no 5xx or INTERNAL, and every refusal names the field; the
 * collector's RSS stays bounded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { clientDrivers } from '../../agent/drivers/registry.js';
import { nodeToken } from '../../collector/auth/principal.js';
import { isCniBenchError } from '../../core/errors.js';
import { MonitorServiceClient } from '../../gen/cnibench/v1/monitor.js';
import { RunServiceClient } from '../../gen/cnibench/v1/run.js';
import type { CollectorMain } from '../support/helpers/collector-main.js';
import * as collectorMain from '../support/helpers/collector-main.js';
import { fixture } from '../support/helpers/fixtures.js';
import { CLI_MAIN, startNode, stop, waitFor } from '../support/helpers/procs.js';
import { isServiceError, SimAgent } from '../support/helpers/sim-agent.js';
import { brokenScenario, hostileJson, hostileString, int, pick, type Rand, rng } from './gen.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_206);
const dir = mkdtempSync(join(tmpdir(), 'cnib-hostile-'));
const TOKEN = 'hostile-suite-operator-token';
const KEY = 'hostile-suite-agent-key-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
/** A refusal that names what was wrong: `field: why` (optionally after `invalid <what>: `). */
const NAMES_FIELD = /^(invalid [\w ]+: )?(\(root\)|[\w$@.[\]-]+): \S/;
let c: CollectorMain;
let cases = 0;
const rssSamples: number[] = [];

function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

function alive(): void {
  assert.equal(c.proc.child.exitCode, null, `the collector died:\n${c.proc.output().slice(-3000)}`);
}

before(async () => {
  writeFileSync(join(dir, 'token'), TOKEN);
  writeFileSync(join(dir, 'key'), KEY);
  c = await collectorMain.startCollectorMain([
    '--rest-token-file',
    join(dir, 'token'),
    '--agent-key-file',
    join(dir, 'key'),
    '--db',
    join(dir, 'c.db'),
  ]);
  rssSamples.push(rssKiB(c.proc.child.pid!));
});

after(async () => {
  await stop(c.proc);
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(
    `# hostile inputs: ${cases} cases, seed ${SEED}, collector RSS KiB ${rssSamples.join(' -> ')}\n`,
  );
});

/** Checks one REST answer: no 5xx, and a 4xx names its field. */
async function rest(what: string, path: string, init: RequestInit = {}): Promise<void> {
  cases++;
  const r = await fetch(`${c.http}${path}`, {
    ...init,
    headers: { ...AUTH, ...(init.headers as Record<string, string> | undefined) },
    signal: AbortSignal.timeout(30_000),
  }).catch((err: Error) => {
    throw new Error(
      `${what} (${path.slice(0, 80)}, ${path.length} chars): ${err.message} ${String((err.cause as Error | undefined)?.message)}\n${c.proc.output().slice(-1500)}`,
    );
  });
  const text = await r.text();
  assert.ok(r.status < 500, `${what}: ${r.status} ${text.slice(0, 300)}`);
  if (r.status >= 400) {
    const body = JSON.parse(text) as { message: string; field?: string };
    assert.ok(
      body.field ||
        NAMES_FIELD.test(body.message) ||
        /^no route |not allowed on |^run '.*' not found/.test(body.message),
      `${what}: refusal does not name the field: ${body.message.slice(0, 300)}`,
    );
  }
}

/** Percent-encoding of any string: a lone surrogate goes as the bytes ED A0 80 that a careless client sends for it. */
function enc(v: string): string {
  return v.replace(/[\s\S]/gu, (ch) =>
    /[\ud800-\udfff]/.test(ch) && ch.length === 1 ? '%ED%A0%80' : encodeURIComponent(ch),
  );
}

describe('REST', () => {
  test('scenarios with one field broken are 4xx naming the field', async () => {
    const r = rng(SEED);
    for (let i = 0; i < 30; i++)
      await rest(`broken scenario #${i}`, '/v1/runs', { method: 'POST', body: JSON.stringify(brokenScenario(r)) });
    alive();
  });

  test('arbitrary JSON bodies, bodies that are not JSON, and a body over the cap', async () => {
    const r = rng(SEED + 1);
    for (let i = 0; i < 15; i++)
      await rest(`json body #${i}`, '/v1/runs', { method: 'POST', body: JSON.stringify(hostileJson(r, 4, 6)) });
    for (const body of [
      '{',
      '[',
      'null',
      '"x"',
      '\u0000',
      `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      `{"name":"${'x'.repeat(2 * 1024 * 1024)}"}`,
    ])
      await rest(`raw body ${body.slice(0, 10)}`, '/v1/runs', { method: 'POST', body });
    alive();
  });

  test('query strings and ids: limit, format, compare, long and odd ids', async () => {
    const r = rng(SEED + 2);
    for (let i = 0; i < 8; i++) await rest(`limit #${i}`, `/v1/runs?limit=${enc(hostileString(r, 64))}`);
    for (let i = 0; i < 6; i++)
      await rest(`report format #${i}`, `/v1/runs/nope/report?format=${enc(hostileString(r, 64))}`);
    for (let i = 0; i < 6; i++) {
      const runs = Array.from({ length: int(r, 0, 40) }, () => hostileString(r, 40)).join(',');
      await rest(
        `compare #${i}`,
        `/v1/compare?runs=${enc(runs)}&format=${encodeURIComponent(pick(r, ['md', 'csv', 'xml', '']))}&noiseFloor=${encodeURIComponent(pick(r, ['0.03', '-1', 'NaN', '1e9']))}`,
      );
    }
    for (const id of ['x'.repeat(5000), 'a-b-c', '0', `r${'9'.repeat(100)}`]) {
      await rest(`get ${id.slice(0, 8)}`, `/v1/runs/${id}`);
      await rest(`delete ${id.slice(0, 8)}`, `/v1/runs/${id}`, { method: 'DELETE' });
    }
    alive();
  });

  test('raw requests: targets, methods, header floods, broken framing', async () => {
    const raws = [
      'GET // HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET http://evil/v1/runs HTTP/1.1\r\nHost: x\r\n\r\n',
      'BREW /v1/runs HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET /v1/runs HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`,
      `GET /v1/runs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /\u00ff\u00fe HTTP/1.1\r\nHost: x\r\n\r\n',
      '\u0000\u0001\u0002 garbage\r\n\r\n',
      `GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'t'.repeat(9000)}\r\n\r\n`,
    ];
    for (const raw of raws) {
      cases++;
      const res = await collectorMain.rawHttp(
        c.http,
        raw.endsWith('\r\n\r\n') ? raw.replace('Host: x', 'Host: x\r\nConnection: close') : raw,
        10_000,
      );
      const status = collectorMain.rawStatus(res);
      assert.ok(
        status === 0 || (status >= 400 && status < 500),
        `${JSON.stringify(raw.slice(0, 40))}: ${res.slice(0, 200)}`,
      );
    }
    alive();
  });

  test('without the operator token, and with an agent\u2019s token, /v1 is refused naming authorization', async () => {
    for (const headers of [
      { authorization: '' },
      { authorization: 'Bearer wrong' },
      { authorization: `Bearer ${nodeToken(Buffer.from(KEY), 'node-a')}` },
      { authorization: 'Basic x' },
    ]) {
      cases++;
      const r = await fetch(`${c.http}/v1/runs`, { headers });
      assert.ok(r.status === 401 || r.status === 403, String(r.status));
      assert.equal(((await r.json()) as { field: string }).field, 'authorization');
    }
  });
});

/** gRPC answer check: a refusal is not INTERNAL/UNKNOWN/UNAVAILABLE and names its field. */
function grpcRefusal(what: string, e: ServiceError): void {
  assert.ok(![2, 13, 14].includes(e.code), `${what}: code ${e.code} ${e.details}`);
  assert.match(e.details, NAMES_FIELD, `${what}: refusal does not name the field`);
}

describe('gRPC', () => {
  const md = (): Metadata => {
    const m = new Metadata();
    m.set('authorization', `Bearer ${TOKEN}`);
    return m;
  };

  test('AgentService Register: hostile names, ids and lists', async () => {
    const r = rng(SEED + 3);
    const node = (): string =>
      pick(r, ['ok-node', hostileString(r, 600), 'UPPER', 'a'.repeat(254), 'node_a', '-x', 'x.'] as const);
    for (let i = 0; i < 20; i++) {
      cases++;
      const n = node();
      const s = new SimAgent({ address: c.grpc, token: nodeToken(Buffer.from(KEY), n || 'x') });
      const req = {
        nodeName: n,
        agentName: r() < 0.3 ? hostileString(r, 300) : '',
        instanceId: hostileString(r, 400),
        tools: Array.from({ length: pick(r, [0, 1, 65, 200]) }, () => ({
          name: hostileString(r, 100),
          version: hostileString(r, 300),
          path: '/x',
        })),
        labels: Object.fromEntries(
          Array.from({ length: pick(r, [0, 2, 70]) }, (_, k) => [`k${k}`, hostileString(r, 80)]),
        ),
      };
      const res = await s.register(req);
      s.close();
      if (isServiceError(res)) grpcRefusal(`register #${i} (${JSON.stringify(n.slice(0, 20))})`, res);
    }
    alive();
  });

  test('AgentService Session: messages before hello, hostile hellos, wild sequence numbers, forged data', async () => {
    const r = rng(SEED + 4);
    const s = new SimAgent({ address: c.grpc, token: nodeToken(Buffer.from(KEY), 'hostile') });
    const reg = await s.register({ nodeName: 'hostile', instanceId: 'h1' });
    assert.ok(!isServiceError(reg), isServiceError(reg) ? reg.details : '');
    s.close();
    const scripts: { seq: number; body: unknown }[][] = [
      [{ seq: 1, body: { $case: 'heartbeat', value: {} } }],
      [{ seq: 0, body: { $case: 'hello', value: { agentId: 'x'.repeat(300), instanceId: 'h1' } } }],
      [
        {
          seq: 0,
          body: {
            $case: 'hello',
            value: { agentId: 'hostile', instanceId: 'h1', activeRunIds: Array.from({ length: 100 }, () => 'r') },
          },
        },
      ],
      [
        { seq: 0, body: { $case: 'hello', value: { agentId: 'hostile', instanceId: 'h1' } } },
        { seq: 0, body: { $case: 'hello', value: { agentId: 'hostile', instanceId: 'h1' } } },
      ],
    ];
    for (let i = 0; i < 12; i++) {
      const seq = pick(r, [1, 2 ** 53 + 1, 1e15, int(r, 1, 100)]);
      const body = pick(r, [
        {
          $case: 'result',
          value: { jobId: hostileString(r, 300), runId: hostileString(r, 300), rawOutput: hostileString(r, 2048) },
        },
        {
          $case: 'sample',
          value: {
            runId: hostileString(r, 200),
            samplingJobId: 'x',
            chains: [],
            errors: Array.from({ length: pick(r, [0, 300]) }, () => 'e'),
          },
        },
        { $case: 'jobEvent', value: { jobId: 'j', runId: 'r', state: 5, message: hostileString(r, 2048) } },
        { $case: 'monitorReport', value: { timeMs: 1 } },
      ]);
      scripts.push([
        { seq: 0, body: { $case: 'hello', value: { agentId: 'hostile', instanceId: 'h1' } } },
        { seq, body },
      ]);
    }
    for (const [i, script] of scripts.entries()) {
      cases++;
      const a = new SimAgent({ address: c.grpc, token: nodeToken(Buffer.from(KEY), 'hostile') });
      a.stream = a.client.session(
        (() => {
          const m = new Metadata();
          m.set('authorization', `Bearer ${nodeToken(Buffer.from(KEY), 'hostile')}`);
          return m;
        })(),
      );
      a.stream.on('data', (m) => a.received.push(m));
      a.stream.on('error', (e: ServiceError) => (a.ended ??= e));
      a.stream.on('end', () => (a.ended ??= 'end'));
      for (const m of script) a.send(m);
      // Either the collector ends the session with a named refusal, or it acknowledges (or ignores) and stays up.
      await waitFor(`session script #${i}`, () => a.ended !== undefined || a.received.length > 0 || true, 2000);
      await new Promise((res) => setTimeout(res, 300));
      if (a.ended && a.ended !== 'end' && a.ended.code !== 1) grpcRefusal(`session #${i}`, a.ended);
      a.close();
    }
    assert.equal(c.proc.output().includes('"level":"error"'), false, 'no message made the collector fail to store');
    alive();
  });

  test('RunService: hostile scenarios, ids, formats and limits', async () => {
    const r = rng(SEED + 5);
    const client = new RunServiceClient(c.grpc, credentials.createInsecure());
    const call = <T>(fn: (cb: (e: ServiceError | null, v?: T) => void) => void): Promise<ServiceError | T> =>
      new Promise((res) => fn((e, v) => res(e ?? (v as T))));
    for (let i = 0; i < 10; i++) {
      cases++;
      const json =
        r() < 0.3 ? hostileString(r, 4096) : JSON.stringify(r() < 0.5 ? brokenScenario(r) : hostileJson(r, 3, 5));
      const res = await call((cb) => client.createRun({ scenarioJson: json }, md(), cb));
      if (isServiceError(res)) grpcRefusal(`createRun #${i}`, res);
    }
    for (const id of ['', 'x'.repeat(10_000), '\u0000', '../x', "' OR 1=1 --"]) {
      cases += 3;
      for (const res of [
        await call((cb) => client.getRun({ id }, md(), cb)),
        await call((cb) => client.cancelRun({ id }, md(), cb)),
        await call((cb) => client.getReport({ id, format: hostileString(r, 64) }, md(), cb)),
      ]) {
        if (isServiceError(res)) grpcRefusal(`id ${JSON.stringify(id.slice(0, 10))}`, res);
      }
    }
    for (const limit of [0, 1, 2 ** 32 - 1]) {
      cases++;
      const res = await call((cb) => client.listRuns({ limit }, md(), cb));
      assert.ok(!isServiceError(res), `listRuns(${limit})`);
    }
    client.close();
    alive();
  });

  test('MonitorService: refused without the operator, answered with it', async () => {
    const client = new MonitorServiceClient(c.grpc, credentials.createInsecure());
    for (const m of [new Metadata(), md()]) {
      cases++;
      const res = await new Promise<ServiceError | 'ok'>((resolve) =>
        client.getMonitor({}, m, (e) => resolve(e ?? 'ok')),
      );
      if (isServiceError(res)) grpcRefusal('getMonitor', res);
    }
    client.close();
  });
});

describe('the real CLI and collector flags', () => {
  test('scenario files: missing, not a file, too big, not JSON, not an object, a broken field', async () => {
    const r = rng(SEED + 6);
    const files: [string, string | undefined][] = [
      [join(dir, 'absent.json'), undefined],
      ['/dev/zero', undefined],
      [dir, undefined],
      [join(dir, 'big.json'), `{"name":"${'x'.repeat(1_100_000)}"}`],
      [join(dir, 'garbage.json'), '\u0000{oops'],
      [join(dir, 'array.json'), '[1,2]'],
      [join(dir, 'broken-1.json'), JSON.stringify(brokenScenario(r))],
      [join(dir, 'broken-2.json'), JSON.stringify(brokenScenario(r))],
    ];
    // Side by side: on a loaded machine each process takes tens of seconds just to start.
    await Promise.all(
      files.map(async ([path, content]) => {
        cases++;
        if (content !== undefined) writeFileSync(path, content);
        const p = startNode(CLI_MAIN, ['lab', '--scenario', path]);
        const code = await p.exited;
        assert.equal(code, 2, `${path}: ${p.output().slice(-500)}`);
        assert.match(p.output(), /cni-bench: (--scenario: |invalid scenario: )/, p.output().slice(-300));
        assert.doesNotMatch(p.output(), /lab created/, 'refused before any namespace exists');
      }),
    );
  });

  test('collector flags: every bad value is one line naming the field', async () => {
    const bad: string[][] = [
      ['--http-port', '-1'],
      ['--http-port=-1'],
      ['--http-port', '70000'],
      ['--grpc-listen', ''],
      ['--liveness-timeout-ms', 'x'],
      ['--kubernetes', 'maybe'],
      ['--namespace', 'Bad_NS'],
      ['--rest-token-file', '/nonexistent/token'],
      ['--agent-key-file', join(dir, 'token')],
      ['--insecure', 'yes'],
      ['--rest-tls', 'true'],
      ['--bogus-flag', '1'],
    ];
    await Promise.all(
      bad.map(async (args) => {
        cases++;
        const p = collectorMain.spawnCollector(args);
        const code = await p.exited;
        assert.equal(code, 2, `${args.join(' ')}: ${p.output()}`);
        const lines = p.output().trim().split('\n');
        assert.equal(lines.length, 1, p.output());
        assert.doesNotMatch(p.output(), /\n\s+at /);
        const field = args[0]!.replace(/^--/, '').replace(/=.*/, '');
        assert.ok(
          /: /.test(lines[0]!) &&
            (lines[0]!
              .toLowerCase()
              .replaceAll(/[^a-z]/g, '')
              .includes(field.replaceAll('-', '')) ||
              /agentKeyFile|kubernetes|httpPort|grpcListen|restTls|insecure|namespace|livenessTimeoutMs|bogus/.test(
                lines[0]!,
              )),
          `${args.join(' ')}: ${lines[0]}`,
        );
      }),
    );
  });
});

describe('tool outputs', () => {
  const FIXTURES: Record<string, string[]> = {
    iperf3: ['iperf3-client-p1.json', 'iperf3-client-udp.json'],
    wrk: ['wrk-keepalive.txt', 'wrk-keepalive-histogram.txt'],
    fortio: ['fortio-keepalive.json'],
    'fortio-tcp': ['fortio-tcp-rr.json'],
    sockperf: ['sockperf-pp-rtt.txt'],
    netperf: ['netperf-tcp-rr.txt'],
    'tcp-rr': ['tcp-rr-rr.json'],
    'http-open-loop': ['http-open-loop-keepalive.json'],
  };
  const mutate = (r: Rand, text: string): string => {
    const op = int(r, 0, 4);
    if (op === 0) return text.slice(0, int(r, 0, text.length));
    if (op === 1)
      return text.replace(/\d+(\.\d+)?/g, () => pick(r, ['-1', 'NaN', '1e999', '', '0', '99999999999999999999']));
    if (op === 2) return [...text].map((ch) => (r() < 0.02 ? String.fromCharCode(int(r, 0, 255)) : ch)).join('');
    if (op === 3) return hostileString(r, 4096);
    return text + text.slice(0, int(r, 0, text.length));
  };

  test('mutated real outputs give a measurement or a parse error naming the tool, never anything else', () => {
    const r = rng(SEED + 7);
    for (const [tool, names] of Object.entries(FIXTURES)) {
      const driver = clientDrivers.get(tool);
      assert.ok(driver, tool);
      for (const name of names) {
        const text = fixture(name);
        for (let i = 0; i < 4; i++) {
          cases++;
          const input = mutate(r, text);
          try {
            driver.parse(input, {
              targetHost: '198.18.0.1',
              targetPort: 5201,
              durationSeconds: 10,
              streams: 1,
              connections: 1,
              requestBytes: 1,
              responseBytes: 1,
            });
          } catch (err) {
            assert.ok(
              isCniBenchError(err),
              `${tool} on mutated ${name} #${i} threw ${(err as Error).name}: ${(err as Error).message.slice(0, 200)}`,
            );
            assert.ok(
              err.message.includes(tool.split('-')[0]!) || err.message.includes(driver.tool),
              `${tool}: ${err.message.slice(0, 200)}`,
            );
          }
        }
      }
    }
  });
});

test('at least 100 cases ran, the collector is alive, and its RSS stayed bounded', () => {
  alive();
  const rss = rssKiB(c.proc.child.pid!);
  rssSamples.push(rss);
  assert.ok(cases >= 100, `only ${cases} cases`);
  assert.ok(rss < 400 * 1024, `collector RSS ${rss} KiB after the suite`);
  assert.ok(rss - rssSamples[0]! < 250 * 1024, `collector RSS grew from ${rssSamples[0]} to ${rss} KiB`);
});
