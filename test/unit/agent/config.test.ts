import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadAgentConfig } from '../../../agent/config.js';
import { linkCredentials } from '../../../agent/link-credentials.js';
import { loadCollectorConfig } from '../../../collector/config.js';
import { serverCredentials } from '../../../collector/grpc/server-credentials.js';
import { loadRestToken } from '../../../collector/rest/auth.js';
import { validationMessage } from '../../support/helpers/errors.js';

test('agent flags win over environment, defaults fill the rest, and the result is frozen', () => {
  const c = loadAgentConfig(['--collector', 'unix:/run/x.sock', '--label', 'zone=a'], {
    CNI_BENCH_COLLECTOR: 'ignored:1',
    NODE_NAME: 'n1',
    POD_IP: '198.18.16.10',
  });
  assert.equal(c.collector, 'unix:/run/x.sock');
  assert.equal(c.nodeName, 'n1');
  assert.equal(c.podIp, '198.18.16.10');
  assert.equal(c.healthPort, 8477);
  assert.deepEqual(c.labels, { zone: 'a' });
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.labels));
});

test('bad agent config names the field', () => {
  assert.throws(() => loadAgentConfig([], {}), /invalid agent config: collector/);
  assert.throws(() => loadAgentConfig(['--collector', 'x:1', '--health-port', '70000'], {}), /healthPort/);
  assert.throws(
    () => loadAgentConfig(['--collector', 'x:1', '--label', 'nokey'], {}),
    /labels: 'nokey' is not key=value/,
  );
  assert.throws(() => loadAgentConfig(['--bogus'], {}), /bogus/);
});

test('collector config from environment, with field names in errors', () => {
  const c = loadCollectorConfig([], { CNI_BENCH_HTTP_PORT: '0', CNI_BENCH_DB: ':memory:' });
  assert.equal(c.httpPort, 0);
  assert.equal(c.grpcListen, '127.0.0.1:7070', 'loopback by default');
  assert.equal(c.httpHost, '127.0.0.1');
  assert.throws(() => loadCollectorConfig(['--liveness-timeout-ms', '10'], {}), /livenessTimeoutMs/);
});

test('the collector refuses to listen beyond loopback without an operator token and TLS, unless insecure', () => {
  assert.match(
    validationMessage(() => loadCollectorConfig(['--grpc-listen', '0.0.0.0:7070'], {})),
    /grpcListen: listening beyond loopback needs restTokenFile and tlsCertFile/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig(['--http-host', '0.0.0.0', '--rest-token-file', '/t'], {})),
    /httpHost: listening beyond loopback needs tlsCertFile \(or insecure=true/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig(['--grpc-listen', '[::]:7070'], {})),
    /grpcListen: /,
  );
  for (const ok of [
    ['--grpc-listen', 'unix:/run/x.sock'],
    ['--grpc-listen', '[::1]:1', '--http-host', 'localhost'],
    ['--grpc-listen', '127.0.0.2:1'],
  ]) {
    assert.doesNotThrow(() => loadCollectorConfig(ok, {}), ok.join(' '));
  }
  assert.doesNotThrow(() =>
    loadCollectorConfig(
      [
        '--grpc-listen',
        '0.0.0.0:7070',
        '--http-host',
        '0.0.0.0',
        '--rest-token-file',
        '/t',
        '--tls-cert-file',
        '/c',
        '--tls-key-file',
        '/k',
      ],
      {},
    ),
  );
  const lab = loadCollectorConfig(
    ['--grpc-listen', '0.0.0.0:7070', '--http-host', '0.0.0.0', '--insecure', 'true'],
    {},
  );
  assert.equal(lab.insecure, true);
  assert.match(
    validationMessage(() => loadCollectorConfig(['--rest-tls', 'true'], {})),
    /restTls: needs tlsCertFile/,
  );
});

test('collector TLS, REST token and Kubernetes fields: defaults, environment names, flags over environment', () => {
  const d = loadCollectorConfig([], {});
  assert.deepEqual(
    [
      d.tlsCertFile,
      d.tlsKeyFile,
      d.tlsCaFile,
      d.restTokenFile,
      d.kubeconfig,
      d.namespace,
      d.sweepNamespace,
      d.agentSelector,
      d.kubernetes,
    ],
    ['', '', '', '', '', 'cni-bench', 'cni-bench-sweep', 'app.kubernetes.io/name=cni-bench-agent', 'auto'],
  );
  const c = loadCollectorConfig(['--namespace', 'bench-a', '--kubernetes', 'off'], {
    CNI_BENCH_TLS_CERT_FILE: '/tls/tls.crt',
    CNI_BENCH_TLS_KEY_FILE: '/tls/tls.key',
    CNI_BENCH_TLS_CA_FILE: '/tls/ca.crt',
    CNI_BENCH_REST_TOKEN_FILE: '/token/token',
    CNI_BENCH_KUBECONFIG: '/kube/config',
    CNI_BENCH_NAMESPACE: 'ignored',
    CNI_BENCH_SWEEP_NAMESPACE: 'sweep-b',
    CNI_BENCH_AGENT_SELECTOR: 'app=agent',
    CNI_BENCH_KUBERNETES: 'kubeconfig',
  });
  assert.equal(c.tlsCertFile, '/tls/tls.crt');
  assert.equal(c.tlsKeyFile, '/tls/tls.key');
  assert.equal(c.tlsCaFile, '/tls/ca.crt');
  assert.equal(c.restTokenFile, '/token/token');
  assert.equal(c.kubeconfig, '/kube/config');
  assert.equal(c.namespace, 'bench-a');
  assert.equal(c.sweepNamespace, 'sweep-b');
  assert.equal(c.agentSelector, 'app=agent');
  assert.equal(c.kubernetes, 'off');
  const f = loadCollectorConfig(
    [
      '--tls-cert-file',
      'c',
      '--tls-key-file',
      'k',
      '--tls-ca-file',
      'a',
      '--rest-token-file',
      't',
      '--kubeconfig',
      'kc',
      '--sweep-namespace',
      's',
      '--agent-selector',
      'x=y',
    ],
    {},
  );
  assert.deepEqual(
    [f.tlsCertFile, f.tlsKeyFile, f.tlsCaFile, f.restTokenFile, f.kubeconfig, f.sweepNamespace, f.agentSelector],
    ['c', 'k', 'a', 't', 'kc', 's', 'x=y'],
  );
});

test('collector TLS files must pair, and bad Kubernetes settings name the field', () => {
  assert.match(
    validationMessage(() => loadCollectorConfig([], { CNI_BENCH_TLS_CERT_FILE: '/c' })),
    /tlsKeyFile: required when tlsCertFile is set/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig(['--tls-key-file', '/k'], {})),
    /tlsCertFile: required when tlsKeyFile is set/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig([], { CNI_BENCH_TLS_CA_FILE: '/ca' })),
    /tlsCaFile: .*set tlsCertFile and tlsKeyFile/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig([], { CNI_BENCH_KUBERNETES: 'sometimes' })),
    /kubernetes:/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig([], { CNI_BENCH_NAMESPACE: 'Not_A_Namespace' })),
    /namespace: must be a lowercase RFC 1123 label/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig(['--sweep-namespace', 'sweep.'], {})),
    /sweepNamespace:/,
  );
  assert.match(
    validationMessage(() => loadCollectorConfig([], { CNI_BENCH_AGENT_SELECTOR: '' })),
    /agentSelector:/,
  );
});

test('agent TLS fields: defaults, environment names, and the pairing errors name the field', () => {
  const base = { CNI_BENCH_COLLECTOR: 'c:1', NODE_NAME: 'n1' };
  const d = loadAgentConfig([], base);
  assert.deepEqual([d.tlsCaFile, d.tlsCertFile, d.tlsKeyFile, d.tlsServerName], ['', '', '', '']);
  const c = loadAgentConfig(['--tls-server-name', 'collector.example'], {
    ...base,
    CNI_BENCH_TLS_CA_FILE: '/tls/ca.crt',
    CNI_BENCH_TLS_CERT_FILE: '/tls/tls.crt',
    CNI_BENCH_TLS_KEY_FILE: '/tls/tls.key',
    CNI_BENCH_TLS_SERVER_NAME: 'ignored',
  });
  assert.deepEqual(
    [c.tlsCaFile, c.tlsCertFile, c.tlsKeyFile, c.tlsServerName],
    ['/tls/ca.crt', '/tls/tls.crt', '/tls/tls.key', 'collector.example'],
  );
  const ca = { ...base, CNI_BENCH_TLS_CA_FILE: '/ca' };
  assert.match(
    validationMessage(() => loadAgentConfig(['--tls-cert-file', '/c'], ca)),
    /tlsKeyFile: required when tlsCertFile is set/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig(['--tls-key-file', '/k'], ca)),
    /tlsCertFile: required when tlsKeyFile is set/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig(['--tls-cert-file', '/c', '--tls-key-file', '/k'], base)),
    /tlsCaFile: required when tlsCertFile is set/,
  );
  assert.match(
    validationMessage(() => loadAgentConfig(['--tls-server-name', 'x'], base)),
    /tlsCaFile: required when tlsServerName is set/,
  );
});

test('files named by config are read at start-up; missing or empty ones are coded errors naming field and path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cnib-config-'));
  try {
    const missing = join(dir, 'missing.pem');
    const empty = join(dir, 'empty');
    writeFileSync(empty, ' \n');
    assert.ok(
      validationMessage(() => serverCredentials({ tlsCertFile: missing, tlsKeyFile: missing, tlsCaFile: '' })).includes(
        `tlsCertFile: cannot read '${missing}'`,
      ),
    );
    assert.ok(
      validationMessage(() => serverCredentials({ tlsCertFile: empty, tlsKeyFile: missing, tlsCaFile: '' })).includes(
        `tlsKeyFile: cannot read '${missing}'`,
      ),
    );
    assert.ok(validationMessage(() => loadRestToken(missing)).includes(`restTokenFile: cannot read '${missing}'`));
    assert.ok(validationMessage(() => loadRestToken(empty)).includes(`restTokenFile: '${empty}' is empty`));
    assert.ok(
      validationMessage(() =>
        linkCredentials({ tlsCaFile: missing, tlsCertFile: '', tlsKeyFile: '', tlsServerName: '' }),
      ).includes(`tlsCaFile: cannot read '${missing}'`),
    );
    assert.equal(
      linkCredentials({ tlsCaFile: '', tlsCertFile: '', tlsKeyFile: '', tlsServerName: '' }).mode,
      'insecure',
    );
    assert.equal(serverCredentials({ tlsCertFile: '', tlsKeyFile: '', tlsCaFile: '' }).mode, 'insecure');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
