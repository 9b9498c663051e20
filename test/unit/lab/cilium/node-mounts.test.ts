/**
 * How a cilium-agent enters its node's held namespaces (lab/cilium/node-mounts.ts),
 * pure: the script is a constant and every value reaches it as a positional
 * argument, so a path with spaces or shell characters stays one argument.
 * Against real Cilium: lab-disruption's restart (docs/disruption.md) and
 * test/integration/lab-cilium-signals.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { inNodeNamespaces } from '../../../../lab/cilium/node-mounts.js';

test('inNodeNamespaces: a constant script, the cgroup, the holder and the command as positional arguments', () => {
  const odd = '/sys/fs/cgroup/cni-bench/ab cd/n0;$(touch /tmp/x)';
  const a = inNodeNamespaces(4242, odd, ['/opt/cilium-agent', '--config-dir=/run/cni-bench-node/config']);
  const b = inNodeNamespaces(7, '/cg', ['x']);
  assert.equal(a[0], '-c');
  assert.equal(a[1], b[1], 'the script does not depend on the values');
  assert.deepEqual(a.slice(2), [
    'cilium-lab-enter',
    odd,
    '4242',
    '/opt/cilium-agent',
    '--config-dir=/run/cni-bench-node/config',
  ]);
  // What sh makes of it, with the two steps that need root replaced by echoes: the cgroup file and the nsenter line.
  const script = (a[1] as string)
    .replace('echo $$ > "$cg/cgroup.procs"', 'printf "%s\\n" "$cg"')
    .replace('exec nsenter', 'echo nsenter');
  const out = execFileSync('sh', ['-c', script, ...a.slice(2)], { encoding: 'utf8' });
  assert.equal(
    out,
    `${odd}\nnsenter --target 4242 --net --mount --cgroup -- /opt/cilium-agent --config-dir=/run/cni-bench-node/config\n`,
  );
});
