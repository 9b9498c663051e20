/**
 * Test support, run as its own process inside a lab node namespace: sends one
 * UDP datagram per distinct flow (source socket x destination port) to a lab
 * address, so the node's conntrack table holds `--count` unreplied entries for
 * about 30 s (nf_conntrack_udp_timeout). The kernel here does not let a
 * network namespace shrink nf_conntrack_max, so the table is filled instead.
 * Traffic goes only to the given lab address (198.18.0.0/15).
 */
import { createSocket } from 'node:dgram';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { target: { type: 'string' }, count: { type: 'string' } } });
const target = values.target ?? '';
const count = Number(values.count);
if (!/^198\.1[89]\./.test(target) || !Number.isInteger(count) || count < 1) {
  process.stderr.write('usage: conntrack-fill --target 198.18.x.y --count N\n');
  process.exit(2);
}
const PORTS = 64_000;
const sockets = Math.ceil(count / PORTS);
const payload = Buffer.from('x');
let sent = 0;
for (let s = 0; s < sockets; s++) {
  const sock = createSocket('udp4');
  const n = Math.min(PORTS, count - s * PORTS);
  let pending = n;
  for (let i = 0; i < n; i++) {
    sock.send(payload, 1024 + i, target, () => {
      sent++;
      if (--pending === 0) sock.close();
    });
  }
}
process.on('exit', () => process.stdout.write(`${sent}\n`));
