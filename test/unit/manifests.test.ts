/**
 * The plain manifests in deploy/manifests are checked against the code that
 * reads them: every env var is one the binary reads, the values parse with the
 * binary's own config loader, the ports are the ones it binds, and the
 * entrypoints exist in the build.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { AGENT_ENV, loadAgentConfig } from '../../agent/config.js';
import { AGENT_NODE_FLAGS } from '../../agent/node-flags.js';
import { COLLECTOR_ENV, loadCollectorConfig } from '../../collector/config.js';
import { repoRoot } from '../support/helpers/fixtures.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Container {
  name: string;
  args: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
}
interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: any;
}

function load(): Doc[] {
  const text = readFileSync(join(repoRoot, 'deploy/manifests/cni-bench.yaml'), 'utf8');
  return parseAllDocuments(text).map((d) => {
    assert.equal(d.errors.length, 0, String(d.errors[0]));
    return d.toJS() as Doc;
  });
}

const fieldSamples: Record<string, string> = {
  'spec.nodeName': 'node-a',
  'metadata.name': 'cni-bench-agent-x1',
  'metadata.namespace': 'cni-bench',
  'status.podIP': '10.0.0.5',
  'status.hostIP': '192.0.2.10',
};

function envOf(c: Container, known: Record<string, string>): NodeJS.ProcessEnv {
  const names = new Set(Object.values(known));
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env) {
    assert.ok(
      names.has(e.name),
      `${c.name}: env ${e.name} is not read by the binary (known: ${[...names].join(', ')})`,
    );
    const path = e.valueFrom?.fieldRef?.fieldPath;
    env[e.name] = e.value ?? (path ? fieldSamples[path] : undefined);
    assert.ok(env[e.name] !== undefined, `${c.name}: env ${e.name} has no value`);
  }
  return env;
}

function only(docs: Doc[], kind: string, name: string): Doc {
  const found = docs.filter((d) => d.kind === kind && d.metadata.name === name);
  assert.equal(found.length, 1, `${kind}/${name}`);
  return found[0]!;
}

test('every object lives in the cni-bench namespace', () => {
  for (const d of load())
    if (d.kind !== 'Namespace') assert.equal(d.metadata.namespace, 'cni-bench', `${d.kind}/${d.metadata.name}`);
});

test('the collector Deployment configures the collector the way its config loader reads it', () => {
  const docs = load();
  const c = only(docs, 'Deployment', 'cni-bench-collector').spec.template.spec.containers[0] as Container;
  const config = loadCollectorConfig([], envOf(c, COLLECTOR_ENV));
  assert.ok(existsSync(join(repoRoot, 'dist', c.args[0]!.replace('/opt/cni-bench/dist/', ''))), c.args[0]);
  const port = (n: string): number => c.ports.find((p) => p.name === n)!.containerPort;
  assert.equal(port('grpc'), Number(config.grpcListen.split(':').at(-1)));
  assert.equal(port('http'), config.httpPort);
  assert.ok(
    c.env.some((e) => e.name === COLLECTOR_ENV.namespace && e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace'),
    'namespace from the downward API',
  );
  assert.equal(config.namespace, 'cni-bench');
  const svc = only(docs, 'Service', 'cni-bench-collector');
  const podLabels = only(docs, 'Deployment', 'cni-bench-collector').spec.template.metadata.labels as Record<
    string,
    string
  >;
  for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>))
    assert.equal(podLabels[k], v, `Service selector ${k}`);
});

test('the agent DaemonSet points at the collector Service and enters the host network namespace', () => {
  const docs = load();
  const ds = only(docs, 'DaemonSet', 'cni-bench-agent').spec.template.spec;
  const c = ds.containers[0] as Container;
  const config = loadAgentConfig([], envOf(c, AGENT_ENV));
  assert.deepEqual(
    c.args,
    [...AGENT_NODE_FLAGS, '/opt/cni-bench/dist/agent/main.js'],
    "the agent runs with its Node flags (after the image entrypoint's)",
  );
  assert.ok(existsSync(join(repoRoot, 'dist', c.args.at(-1)!.replace('/opt/cni-bench/dist/', ''))), c.args.at(-1));
  const svc = only(docs, 'Service', 'cni-bench-collector');
  const grpcPort = svc.spec.ports.find((p: { name: string }) => p.name === 'grpc').port;
  assert.equal(config.collector, `${svc.metadata.name}.${svc.metadata.namespace}.svc:${grpcPort}`);
  assert.equal(config.nodeName, 'node-a');
  assert.equal(config.hostNetns, '/proc/1/ns/net');
  assert.equal(ds.hostPID, true, 'nsenter into /proc/1/ns/net needs hostPID');
  assert.notEqual(ds.hostNetwork, true, 'the agent measures the pod network');
  assert.equal(c.ports.find((p) => p.name === 'health')!.containerPort, config.healthPort);
});
