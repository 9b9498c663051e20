/**
 * The cilium-agent's own account of itself (GET /v1/debuginfo on its socket),
 * parsed from a real v1.20.2 answer captured in the lab
 * (test/fixtures/cilium/README.md), with its truncated and error forms.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  parseCiliumDebuginfo,
  socketCandidates,
  socketPathFromCmdline,
} from '../../../../agent/samplers/cilium-api.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test('debuginfo: the version, kube-proxy replacement and routing a real agent reports', () => {
  assert.deepEqual(parseCiliumDebuginfo(fixture('cilium/api-debuginfo.json')), {
    version: '1.20.2',
    versionFull: '1.20.2 go-module-proxy 2026-09-15T20:03:11Z go version go1.26.8 linux/amd64',
    kubeProxyReplacement: 'True',
    routing: 'Native',
    tunnelProtocol: '',
  });
});

test('debuginfo: truncated output, an error body and a version-less answer are errors naming the API', () => {
  assert.throws(() => parseCiliumDebuginfo(fixture('cilium/api-debuginfo-truncated.json')), /cilium-agent API/);
  assert.throws(
    () => parseCiliumDebuginfo(fixture('cilium/api-not-found.json')),
    /cilium-agent API.*no cilium-version/,
  );
  assert.throws(() => parseCiliumDebuginfo('{"cilium-version":"unknown"}'), /does not start with a version/);
  assert.throws(() => parseCiliumDebuginfo('[]'), /cilium-agent API/);
  assert.throws(() => parseCiliumDebuginfo(''), /cilium-agent API/);
});

test("socket: the agent's own --socket-path first, then /run/cilium and /var/run/cilium, all under /proc/<pid>/root", () => {
  const cmdline = fixture('cilium/agent-cmdline.txt');
  assert.equal(socketPathFromCmdline(cmdline), undefined);
  assert.deepEqual(socketCandidates('/proc', 7, cmdline), [
    '/proc/7/root/run/cilium/cilium.sock',
    '/proc/7/root/var/run/cilium/cilium.sock',
  ]);
  assert.equal(socketPathFromCmdline('cilium-agent\0--socket-path=/x/c.sock\0'), '/x/c.sock');
  assert.equal(socketPathFromCmdline('cilium-agent\0--socket-path\0/y.sock\0'), '/y.sock');
  assert.equal(socketCandidates('/host/proc', 9, 'a\0--socket-path=/x.sock')[0], '/host/proc/9/root/x.sock');
});
