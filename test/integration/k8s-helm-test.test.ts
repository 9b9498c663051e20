/**
 * `helm test`'s check (issue 17 item 7) on the harness cluster: the chart
 * installed on a real apiserver with kwok nodes, the hook's own ServiceAccount
 * and Role created from the chart, and its script (files/check-agents.mjs)
 * run with that ServiceAccount's real token against the apiserver and against
 * a real collector whose real agents register under the kwok nodes' names. It
 * passes with every agent connected and fails naming the node whose agent was
 * stopped. Substitute, named: the script runs as a local process, not in the
 * hook Pod (kwok runs no containers); the Pod itself is checked by
 * test/unit/helm-chart-user.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CHART_DIR, createAll, helm, kubeConfigFrom, renderChart } from '../support/harness/apply.js';
import { type ControlPlane, startControlPlane } from '../support/harness/control-plane.js';
import { addKwokNodes } from '../support/harness/kwok-nodes.js';
import { type CollectorMain, startCollectorMain } from '../support/helpers/collector-main.js';
import { AGENT_MAIN, freePort, type Proc, startNode, stop, waitFor } from '../support/helpers/procs.js';

const NS = 'cni-bench-t';
const RELEASE = 'cni-bench-agent';
const SCRIPT = join(CHART_DIR, 'files/check-agents.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-helm-test-'));
let cp: ControlPlane;
let admin: KubeConfig;
let nodes: string[];
let collector: CollectorMain;
const agents = new Map<string, Proc>();
const restToken = join(tmp, 'rest-token');
const kubeToken = join(tmp, 'kube-token');

async function check(timeoutSeconds: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    KUBE_API_URL: cp.server,
    KUBE_TOKEN_FILE: kubeToken,
    NODE_EXTRA_CA_CERTS: cp.caCert,
    CHECK_NAMESPACE: NS,
    CHECK_DAEMONSET: 'cni-bench-agent',
    CHECK_AGENT_SELECTOR: `app.kubernetes.io/name=cni-bench-agent,app.kubernetes.io/instance=${RELEASE}`,
    CHECK_COLLECTOR_URL: collector.http,
    CHECK_REST_TOKEN_FILE: restToken,
    CHECK_TIMEOUT_SECONDS: String(timeoutSeconds),
  };
  try {
    const r = await promisify(execFile)(process.execPath, [SCRIPT], { env, timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

before(async () => {
  cp = await startControlPlane({ controllers: true, kwok: true });
  admin = kubeConfigFrom(cp.adminKubeconfig);
  nodes = await addKwokNodes(cp.adminKubeconfig, 2);
  helm(cp, ['install', RELEASE, CHART_DIR, '--namespace', NS, '--create-namespace', '--wait', '--timeout', '120s']);
  // The hook's identity as the chart renders it (helm test would create these before its Pod).
  const hook = renderChart(RELEASE, NS, [], [], ['--show-only', 'templates/tests/agents-connected.yaml']);
  await createAll(
    admin,
    hook.filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind ?? '')),
  );
  const tr = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: 'cni-bench-test-agents',
    namespace: NS,
    body: { spec: { audiences: ['https://kubernetes.default.svc.cluster.local'], expirationSeconds: 3600 } },
  });
  writeFileSync(kubeToken, tr.status?.token ?? '', { mode: 0o600 });
  writeFileSync(restToken, 'a-test-token-of-the-operator-0123456789', { mode: 0o600 });
  collector = await startCollectorMain(['--rest-token-file', restToken]);
  for (const node of nodes) {
    const health = await freePort();
    agents.set(
      node,
      startNode(AGENT_MAIN, [
        '--collector',
        collector.grpc,
        '--node-name',
        node,
        '--pod-ip',
        '127.0.0.1',
        '--health-port',
        String(health),
      ]),
    );
  }
});

after(async () => {
  await Promise.all([...agents.values()].map((a) => stop(a)));
  await stop(collector?.proc);
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test('the helm test check passes with every agent connected and fails naming the node whose agent is gone', async () => {
  const ok = await check(120);
  assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
  assert.match(ok.stdout, new RegExp(`^ok: all 2 agents connected \\(${[...nodes].sort().join(', ')}\\)`));
  const gone = nodes[1] as string;
  await stop(agents.get(gone));
  await waitFor(
    `${gone} to show disconnected`,
    async () => {
      const r = await fetch(`${collector.http}/v1/agents`, {
        headers: { authorization: 'Bearer a-test-token-of-the-operator-0123456789' },
      });
      const body = (await r.json()) as { agents: { nodeName: string; connected: boolean }[] };
      return body.agents.some((a) => a.nodeName === gone && !a.connected);
    },
    60_000,
    250,
  );
  const failed = await check(3);
  assert.equal(failed.code, 1, failed.stdout);
  assert.match(failed.stderr, new RegExp(`FAILED after 3 s:\\n {2}${gone}: agent not connected`));
  assert.doesNotMatch(failed.stderr, new RegExp(`${nodes[0]}:`));
});

test('a token the apiserver does not accept fails the check, never passes it', async () => {
  writeFileSync(kubeToken, 'not-a-token');
  const r = await check(2);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /401/);
});
