import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCodes, isCniBenchError } from '../../../core/errors.js';
import { planLab } from '../../../lab/plan.js';
import { createLabProxy, PROXY_MODES } from '../../../lab/proxy.js';

test("proxy mode 'external': writes nothing and refuses to be the run's service frontend, with a coded error", async () => {
  const p = createLabProxy(planLab('abcd', 2), { mode: 'external' });
  assert.equal(p.mode, 'external');
  await p.init();
  const refused = (what: RegExp) => (err: unknown) =>
    isCniBenchError(err, ErrorCodes.LAB) && what.test(err.message) && err.details.proxyMode === 'external';
  await assert.rejects(
    p.expose('http-echo', 80, [{ ip: '198.18.16.10', port: 8080 }]),
    refused(/expose\('http-echo'\) refused; an external kube-proxy programs the nodes/),
  );
  await assert.rejects(p.setDummyServices(300, 2), refused(/setDummyServices\(300\) refused/));
  await p.remove('http-echo');
});

test("'external' is not an emulated mode: the CLI's --proxy-mode and --modes do not offer it", () => {
  assert.deepEqual([...PROXY_MODES], ['iptables', 'nftables']);
});
