/**
 * The chart as a Helm user meets it (issue 17 item 7), through the real helm
 * and promtool: NOTES warn about an image no node can pull and explain the Pod
 * Security level; commonLabels, pod labels, annotations and extra env reach
 * the objects; every alert has a runbook_url whose section exists in
 * docs/runbooks.md and the chart can point them elsewhere; the dashboard has
 * the conntrack-drops panel; metric names follow Prometheus conventions.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { repoRoot } from '../support/helpers/fixtures.js';

const tools = process.env.CNI_BENCH_TOOLS_DIR ?? '/var/cache/cni-bench/tools';
const chart = join(repoRoot, 'deploy/helm/cni-bench-agent');
const home = mkdtempSync(join(tmpdir(), 'cni-bench-helm-user-'));
after(() => rmSync(home, { recursive: true, force: true }));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, KUBECONFIG: join(home, 'none') };

function helm(args: string[]): string {
  return execFileSync(join(tools, 'bin', 'helm'), args, { env, encoding: 'utf8', maxBuffer: 16 << 20 });
}

function render(set: string[] = []): any[] {
  const out = helm(['template', 'cni-bench-agent', chart, '-n', 'bench', ...set.flatMap((s) => ['--set', s])]);
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);
}

function notes(set: string[] = []): string {
  const out = helm([
    'install',
    '--dry-run=client',
    'cni-bench-agent',
    chart,
    '-n',
    'bench',
    ...set.flatMap((s) => ['--set', s]),
  ]);
  return out.slice(out.indexOf('NOTES:'));
}

test('NOTES warn when the image is a local build no node can pull, and say what Pod Security level the agents need', () => {
  const local = notes();
  assert.match(local, /WARNING: image localhost\/cni-bench:0\.1\.0 is not pullable/);
  assert.match(local, /Pod Security level "privileged"/);
  assert.match(local, /kubectl label namespace bench pod-security\.kubernetes\.io\/enforce=privileged/);
  assert.doesNotMatch(local, /dataplaneRestart/);
  assert.match(
    notes(['rbac.dataplaneRestart.enabled=true']),
    /WARNING: rbac\.dataplaneRestart\.enabled: the collector may list and delete ANY pod in namespace kube-system/,
  );
  const pushed = notes(['image.repository=registry.example.com/team/cni-bench']);
  assert.doesNotMatch(pushed, /is not pullable/);
  assert.match(
    notes(['image.repository=registry.example.com/team/cni-bench', 'image.pullPolicy=Never']),
    /pullPolicy is Never/,
  );
});

test('commonLabels, pod labels, object annotations and extra env reach the objects', () => {
  const docs = render([
    'commonLabels.team=platform',
    'agent.podLabels.tier=node',
    'collector.annotations.owner=netops',
    'agent.extraEnv[0].name=HTTPS_PROXY',
    'agent.extraEnv[0].value=http://proxy:3128',
    'collector.extraEnv[0].name=TZ',
    'collector.extraEnv[0].value=UTC',
  ]);
  for (const d of docs) assert.equal(d.metadata.labels?.team, 'platform', `${d.kind}/${d.metadata.name}`);
  const ds = docs.find((d) => d.kind === 'DaemonSet');
  const dep = docs.find((d) => d.kind === 'Deployment');
  assert.equal(ds.spec.template.metadata.labels.tier, 'node');
  assert.equal(ds.spec.template.metadata.labels.team, 'platform');
  assert.equal(ds.spec.selector.matchLabels.team, undefined);
  assert.equal(dep.metadata.annotations.owner, 'netops');
  assert.deepEqual(ds.spec.template.spec.containers[0].env.at(-1), { name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
  assert.deepEqual(dep.spec.template.spec.containers[0].env.at(-1), { name: 'TZ', value: 'UTC' });
  assert.throws(() => render(['agent.extraEnv[0].value=x']), /name/);
});

test('every alert has a runbook_url with a section in docs/runbooks.md; runbookBaseUrl points them elsewhere', () => {
  const rules = parse(readFileSync(join(chart, 'files/prometheus-rules.yaml'), 'utf8'));
  const runbooks = readFileSync(join(repoRoot, 'docs/runbooks.md'), 'utf8');
  const alerts = rules.groups.flatMap((g: any) => g.rules).filter((r: any) => r.alert);
  assert.ok(alerts.length >= 8);
  for (const a of alerts) {
    assert.equal(a.annotations.runbook_url, `docs/runbooks.md#${a.alert.toLowerCase()}`, a.alert);
    assert.match(runbooks, new RegExp(`^## ${a.alert}$`, 'm'), `docs/runbooks.md has no section for ${a.alert}`);
  }
  const docs = render([
    'monitoring.prometheusRule.enabled=true',
    'monitoring.prometheusRule.runbookBaseUrl=https://wiki.example.com/cni-bench/runbooks',
  ]);
  const rule = docs.find((d) => d.kind === 'PrometheusRule');
  const urls = rule.spec.groups
    .flatMap((g: any) => g.rules)
    .flatMap((r: any) => (r.alert ? [r.annotations.runbook_url] : []));
  assert.equal(urls.length, alerts.length);
  for (const u of urls) assert.match(u, /^https:\/\/wiki\.example\.com\/cni-bench\/runbooks#cnibench[a-z]+$/);
});

test('promtool: the rules pass check rules, and lint finds no naming problem', () => {
  const out = execFileSync(
    join(tools, 'bin', 'promtool'),
    ['check', 'rules', '--lint=all', '--lint-fatal', join(chart, 'files/prometheus-rules.yaml')],
    {
      encoding: 'utf8',
    },
  );
  assert.match(out, /SUCCESS: \d+ rules found/);
});

test('the dashboard shows conntrack drops, and reads the standard process_* names for the agent', () => {
  const d = JSON.parse(readFileSync(join(chart, 'files/grafana-dashboard.json'), 'utf8'));
  const exprs = d.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => `${p.title}: ${t.expr}`));
  assert.ok(
    exprs.some((e: string) => /increase\(cni_bench_conntrack_drops_total/.test(e)),
    exprs.join('\n'),
  );
  assert.ok(exprs.some((e: string) => /rate\(process_cpu_seconds_total\{/.test(e)));
  assert.ok(
    !exprs.some((e: string) => /cni_bench_agent_(cpu|resident)|outbox_dropped[^_]|probe_p(50|99)_seconds/.test(e)),
  );
  const ids = d.panels.map((p: any) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
});

test('helm test: a hook Pod runs files/check-agents.mjs with every variable it reads, under its own narrow Role', () => {
  const docs = render();
  const hooks = docs.filter((d) => d.metadata.annotations?.['helm.sh/hook'] === 'test');
  assert.deepEqual(hooks.map((d) => d.kind).sort(), ['ConfigMap', 'Pod', 'Role', 'RoleBinding', 'ServiceAccount']);
  const pod = hooks.find((d) => d.kind === 'Pod');
  const c = pod.spec.containers[0];
  assert.deepEqual(c.args, ['/opt/cni-bench/tests/check-agents.mjs']);
  const script = readFileSync(join(chart, 'files/check-agents.mjs'), 'utf8');
  const cm = hooks.find((d) => d.kind === 'ConfigMap');
  assert.equal(cm.data['check-agents.mjs'], script.replace(/\n$/, ''));
  const read = [...script.matchAll(/env\('(CHECK_\w+)'/g)].map((m) => m[1]);
  const set = c.env.map((e: { name: string }) => e.name);
  for (const v of read) assert.ok(set.includes(v), `${v} is read by the script and not set on the Pod`);
  assert.equal(c.env.find((e: { name: string }) => e.name === 'CHECK_DAEMONSET').value, 'cni-bench-agent');
  assert.equal(pod.spec.securityContext.runAsNonRoot, true);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
  const role = hooks.find((d) => d.kind === 'Role');
  assert.deepEqual(
    role.rules.map(
      (r: any) => `${r.apiGroups[0]}/${r.resources[0]}${r.resourceNames ? `[${r.resourceNames}]` : ''} ${r.verbs}`,
    ),
    ['apps/daemonsets[cni-bench-agent] get', '/pods list'],
  );
  assert.equal(render(['tests.enabled=false']).filter((d) => d.metadata.annotations?.['helm.sh/hook']).length, 0);
});

test('rest.tls: REST over TLS end to end (env, probe, Service annotations for cni-bench --release, ServiceMonitor, helm test), and nothing of it with TLS disabled', () => {
  const find = (objs: any[], kind: string, name?: string) =>
    objs.find((o) => o.kind === kind && (!name || o.metadata.name === name));
  const plain = render();
  const svc = find(plain, 'Service', 'cni-bench-collector');
  assert.deepEqual(svc.metadata.annotations, {
    'cni-bench.io/rest-token-secret': 'cni-bench-rest-token',
    'cni-bench.io/rest-token-key': 'token',
    'cni-bench.io/rest-scheme': 'http',
  });
  const on = render(['rest.tls=true', 'serviceMonitor.enabled=true', 'collector.service.annotations.team=net']);
  const tlsSvc = find(on, 'Service', 'cni-bench-collector');
  assert.deepEqual(tlsSvc.metadata.annotations, {
    'cni-bench.io/rest-token-secret': 'cni-bench-rest-token',
    'cni-bench.io/rest-token-key': 'token',
    'cni-bench.io/rest-scheme': 'https',
    'cni-bench.io/tls-secret': 'cni-bench-tls',
    'cni-bench.io/server-name': 'cni-bench-collector.bench.svc',
    team: 'net',
  });
  const c = find(on, 'Deployment').spec.template.spec.containers[0];
  assert.equal(c.env.find((e: any) => e.name === 'CNI_BENCH_REST_TLS')?.value, 'true');
  assert.equal(c.readinessProbe.httpGet.scheme, 'HTTPS');
  const sm = find(on, 'ServiceMonitor').spec.endpoints[0];
  assert.equal(sm.scheme, 'https');
  assert.deepEqual(sm.tlsConfig, {
    serverName: 'cni-bench-collector.bench.svc',
    ca: { secret: { name: 'cni-bench-tls', key: 'ca.crt' } },
  });
  const hook = find(on, 'Pod', 'cni-bench-test-agents').spec;
  const hookEnv = Object.fromEntries(hook.containers[0].env.map((e: any) => [e.name, e.value]));
  assert.equal(hookEnv.CHECK_COLLECTOR_URL, 'https://cni-bench-collector.bench.svc:8080');
  assert.equal(hookEnv.CHECK_COLLECTOR_CA_FILE, '/etc/cni-bench/tls/ca.crt');
  assert.ok(hook.volumes.some((v: any) => v.secret?.secretName === 'cni-bench-tls'));
  const off = render(['rest.tls=true', 'tls.mode=disabled']);
  assert.equal(find(off, 'Service', 'cni-bench-collector').metadata.annotations['cni-bench.io/rest-scheme'], 'http');
  const offC = find(off, 'Deployment').spec.template.spec.containers[0];
  assert.equal(
    offC.env.find((e: any) => e.name === 'CNI_BENCH_REST_TLS'),
    undefined,
  );
  assert.equal(offC.readinessProbe.httpGet.scheme, undefined);
});
