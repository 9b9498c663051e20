/**
 * The PrometheusRule's rule file and the Grafana dashboard, checked with the
 * real promtool (scripts/build-control-plane.sh builds it): the file passes
 * `promtool check rules`; `promtool test rules` proves the conntrack alert
 * fires at 85% fill and not at 50%, and likewise for BPF maps, probe errors,
 * unreachable peers and KUBE-SERVICES growth; every metric the rules and the
 * dashboard name is one the agent exports.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { AgentMetrics } from '../../../../agent/monitor/metrics.js';
import { CollectorMetrics } from '../../../../collector/metrics.js';
import { repoRoot } from '../../../support/helpers/fixtures.js';
import { promtool } from '../../../support/helpers/monitor-support.js';

const RULES = join(repoRoot, 'deploy/helm/cni-bench-agent/files/prometheus-rules.yaml');
const DASHBOARD = join(repoRoot, 'deploy/helm/cni-bench-agent/files/grafana-dashboard.json');
const tmp = mkdtempSync(join(tmpdir(), 'cnib-rules-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const conntrackAnnotations = (node: string, pct: string) => ({
  summary: `Conntrack table of ${node} is ${pct} full`,
  description:
    'Raise net.netfilter.nf_conntrack_max or find what opens so many connections; above 100% new connections are dropped.',
});

const ruleTests = {
  rule_files: [RULES],
  evaluation_interval: '1m',
  tests: [
    {
      name: 'conntrack fill: 85% fires after 5 minutes, 50% never',
      interval: '1m',
      input_series: [
        { series: 'cni_bench_conntrack_fill_ratio{node="n85"}', values: '0.85x20' },
        { series: 'cni_bench_conntrack_fill_ratio{node="n50"}', values: '0.5x20' },
      ],
      alert_rule_test: [
        { eval_time: '3m', alertname: 'CniBenchConntrackTableFilling', exp_alerts: [] },
        {
          eval_time: '10m',
          alertname: 'CniBenchConntrackTableFilling',
          exp_alerts: [
            { exp_labels: { severity: 'warning', node: 'n85' }, exp_annotations: conntrackAnnotations('n85', '85%') },
          ],
        },
      ],
    },
    {
      name: 'conntrack drops: any increase fires at once, a flat counter never',
      interval: '1m',
      input_series: [
        { series: 'cni_bench_conntrack_drops_total{node="full"}', values: '0 0 0 12 30x10' },
        { series: 'cni_bench_conntrack_drops_total{node="fine"}', values: '7x14' },
      ],
      alert_rule_test: [
        { eval_time: '2m', alertname: 'CniBenchConntrackDropping', exp_alerts: [] },
        {
          eval_time: '4m',
          alertname: 'CniBenchConntrackDropping',
          exp_alerts: [
            {
              exp_labels: { severity: 'critical', node: 'full' },
              exp_annotations: {
                summary: 'Conntrack on full dropped 30 packets in 5 minutes (table full)',
                description:
                  'New connections through this node are being lost. Raise net.netfilter.nf_conntrack_max or find what opens so many connections.',
              },
            },
          ],
        },
        { eval_time: '12m', alertname: 'CniBenchConntrackDropping', exp_alerts: [] },
      ],
    },
    {
      name: 'BPF map fill: 90% fires, 40% does not',
      interval: '1m',
      input_series: [
        { series: 'cni_bench_bpf_map_fill_ratio{node="a",map="cilium_lb4_serv"}', values: '0.9x20' },
        { series: 'cni_bench_bpf_map_fill_ratio{node="a",map="cilium_ct4_glob"}', values: '0.4x20' },
      ],
      alert_rule_test: [
        {
          eval_time: '10m',
          alertname: 'CniBenchBpfMapFilling',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', node: 'a', map: 'cilium_lb4_serv' },
              exp_annotations: {
                summary: 'BPF map cilium_lb4_serv on a is 90% full',
                description: "Raise the map's size (for Cilium's LB maps: bpf-lb-map-max) before it overflows.",
              },
            },
          ],
        },
      ],
    },
    {
      name: 'probe errors: a failure every minute fires, none does not; a peer down fires after 2 minutes',
      interval: '1m',
      input_series: [
        {
          series: 'cni_bench_probe_errors_total{type="tcp-connect",source_node="a",target_node="b",reason="timeout"}',
          values: '0+1x20',
        },
        {
          series: 'cni_bench_probe_errors_total{type="tcp-connect",source_node="a",target_node="c",reason="timeout"}',
          values: '2x20',
        },
        { series: 'cni_bench_probe_peer_up{source_node="a",target_node="b"}', values: '1 1 0x10' },
        { series: 'cni_bench_probe_peer_up{source_node="a",target_node="c"}', values: '1x12' },
      ],
      alert_rule_test: [
        {
          eval_time: '10m',
          alertname: 'CniBenchProbeErrors',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', type: 'tcp-connect', source_node: 'a', target_node: 'b' },
              exp_annotations: {
                summary: 'tcp-connect probes from a to b fail',
                description: 'See cni_bench_probe_errors_total by reason (timeout, refused, unreachable, reset, ...).',
              },
            },
          ],
        },
        { eval_time: '3m', alertname: 'CniBenchPeerUnreachable', exp_alerts: [] },
        {
          eval_time: '6m',
          alertname: 'CniBenchPeerUnreachable',
          exp_alerts: [
            {
              exp_labels: { severity: 'critical', source_node: 'a', target_node: 'b' },
              exp_annotations: {
                summary: 'a cannot reach b',
                description:
                  'Every probe type of the last rounds failed or some did; see cni_bench_probe_errors_total.',
              },
            },
          ],
        },
      ],
    },
    {
      name: 'KUBE-SERVICES: +5,000 rules in a day fires, a steady table does not',
      interval: '1m',
      input_series: [
        { series: 'cni_bench_iptables_kube_services_rules{node="grows"}', values: '1000x1500 6000x100' },
        { series: 'cni_bench_iptables_kube_services_rules{node="steady"}', values: '20000x1600' },
      ],
      alert_rule_test: [
        {
          eval_time: '26h',
          alertname: 'CniBenchKubeServicesGrowth',
          exp_alerts: [
            {
              exp_labels: { severity: 'info', node: 'grows' },
              exp_annotations: {
                summary: 'KUBE-SERVICES on grows grew to 6000 rules, by more than 20% and 1,000 rules within a day',
                description:
                  'In iptables mode short-connection RPS falls as KUBE-SERVICES grows (about -59% at 5,000 Services in the lab); consider nftables or IPVS mode.',
              },
            },
          ],
        },
      ],
    },
  ],
};

// Every alert carries its runbook (docs/runbooks.md, one section per alert).
for (const t of ruleTests.tests)
  for (const a of t.alert_rule_test as {
    alertname: string;
    exp_alerts: { exp_annotations?: Record<string, string> }[];
  }[])
    for (const e of a.exp_alerts)
      if (e.exp_annotations) e.exp_annotations.runbook_url = `docs/runbooks.md#${a.alertname.toLowerCase()}`;

test('the rule file passes promtool check rules', () => {
  const r = promtool(['check', 'rules', RULES]);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /SUCCESS: 10 rules found/);
});

test('promtool test rules: the alerts fire where they must and not elsewhere', () => {
  const file = join(tmp, 'rules-test.yaml');
  writeFileSync(file, stringify(ruleTests));
  const r = promtool(['test', 'rules', file]);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /SUCCESS/);
});

test('promtool test rules fails when the conntrack alert is expected at 50% (the test can fail)', () => {
  const wrong = structuredClone(ruleTests);
  wrong.tests = [
    {
      ...ruleTests.tests[0]!,
      alert_rule_test: [
        {
          eval_time: '10m',
          alertname: 'CniBenchConntrackTableFilling',
          exp_alerts: [
            { exp_labels: { severity: 'warning', node: 'n50' }, exp_annotations: conntrackAnnotations('n50', '50%') },
          ],
        },
      ],
    },
  ];
  const file = join(tmp, 'rules-wrong.yaml');
  writeFileSync(file, stringify(wrong));
  assert.notEqual(promtool(['test', 'rules', file]).status, 0);
});

/** Metric names the agent exports, with a histogram's series suffixes. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await new AgentMetrics('n').registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_count', '_sum']) names.add(`${m.name}${s}`);
  }
  for (const m of await new CollectorMetrics(false).registry.getMetricsAsJSON()) names.add(m.name);
  return names;
}

function referenced(text: string): string[] {
  return [...new Set(text.match(/\bcni_bench(?::[a-z0-9_]+)+|\bcni_bench_[a-z0-9_]+/g) ?? [])];
}

test('every metric the rules and the dashboard use is exported (or recorded by the rules)', async () => {
  const names = await exportedNames();
  const rules = readFileSync(RULES, 'utf8');
  for (const r of rules.matchAll(/record: (\S+)/g)) names.add(r[1] as string);
  const exprs = [...rules.matchAll(/expr: ([\s\S]*?)(?=\n\s+(?:for|labels|- record|- alert|annotations):|\n\s*\n|$)/g)]
    .map((m) => m[1] as string)
    .join('\n');
  const dash = readFileSync(DASHBOARD, 'utf8');
  const targets = (JSON.parse(dash) as { panels: { targets?: { expr: string }[] }[] }).panels
    .flatMap((p) => (p.targets ?? []).map((t) => t.expr))
    .join('\n');
  for (const [what, text] of [
    ['rules', exprs],
    ['dashboard', targets],
  ] as const) {
    const used = referenced(text);
    assert.ok(used.length > 5, `${what}: ${used.join(', ')}`);
    for (const n of used) assert.ok(names.has(n), `${what} uses ${n}, which nothing exports`);
  }
});

test('the dashboard is Grafana JSON with a Prometheus datasource variable on every panel and unique panel ids', () => {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    title: string;
    uid: string;
    panels: { id: number; type: string; datasource?: { uid: string }; targets?: unknown[] }[];
    templating: { list: { name: string; type: string }[] };
  };
  assert.ok(d.title && d.uid);
  assert.ok(d.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'));
  assert.ok(d.templating.list.some((v) => v.name === 'node'));
  const ids = d.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const p of d.panels.filter((x) => x.type !== 'row')) {
    assert.equal(p.datasource?.uid, '${datasource}', `panel ${p.id}`);
    assert.ok((p.targets ?? []).length > 0, `panel ${p.id} has no query`);
  }
});
