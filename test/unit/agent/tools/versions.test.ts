import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIptablesBackend, versionProbes } from '../../../../agent/tools/versions.js';
import { isCniBenchError } from '../../../../core/errors.js';
import { fixture } from '../../../support/helpers/fixtures.js';

const probe = (tool: string) => {
  const p = versionProbes.find((x) => x.tool === tool);
  assert.ok(p, tool);
  return p;
};

test('versions of the installed tools, from their real output', () => {
  assert.equal(probe('iperf3').parse(fixture('version-iperf3.txt')), '3.12');
  assert.equal(probe('wrk').parse(fixture('version-wrk.txt')), '4.1.0');
  assert.equal(probe('sockperf').parse(fixture('version-sockperf.txt')), '3.7');
  assert.equal(probe('bpftool').parse(fixture('version-bpftool.txt')), '7.1.0');
  // Run by full path (as discovery does), bpftool prints that path in its version line.
  assert.equal(probe('bpftool').parse(fixture('version-bpftool-fullpath.txt')), '7.1.0');
  assert.equal(probe('iptables').parse(fixture('version-iptables-nft.txt')), '1.8.9');
  assert.equal(probe('nft').parse(fixture('version-nft.txt')), '1.0.6');
  assert.equal(probe('conntrack').parse(fixture('version-conntrack.txt')), '1.4.7');
  assert.equal(probe('fortio').parse(fixture('version-fortio.txt')), '1.68.2');
});

test('a missing tool answers with the shell, which is not a version', () => {
  assert.throws(
    () => probe('fortio').parse(fixture('version-fortio-missing.txt')),
    (err) => isCniBenchError(err, 'E_PARSE') && err.message.startsWith('fortio:'),
  );
  assert.throws(
    () => probe('netperf').parse(fixture('version-netperf-missing.txt')),
    (err) => isCniBenchError(err, 'E_PARSE'),
  );
});

test('iptables backend as kube-proxy sees it', () => {
  assert.equal(parseIptablesBackend(fixture('version-iptables-nft.txt')), 'nft');
  assert.equal(parseIptablesBackend(fixture('version-iptables-legacy.txt')), 'legacy');
  assert.throws(() => parseIptablesBackend('iptables v1.4.21'), /iptables: cannot parse output/);
});
