/**
 * The in-namespace half of a path to an apiserver across network namespaces,
 * run as `ip netns exec <ns> node forwarder.js <listen> <target>`, where each
 * address is a unix socket path (it contains '/'; filesystem paths are shared
 * across namespaces) or host:port over TCP inside the namespace:
 * - the lab: `<unix socket> 198.18.0.254:6443` lets the lab process in the root
 *   namespace reach the apiserver on the fabric bridge;
 * - the test harness (test/support/harness/api-bridge.ts): `127.0.0.1:6443
 *   <unix socket>` lets a process in a namespace reach the harness apiserver.
 * Bytes are not looked at; TLS is end to end. Prints one line when listening
 * and exits when its parent (`ip netns exec` execs) is gone, so a killed lab or
 * test leaves no forwarder behind.
 */

import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { formatPipeAddress, type PipeAddress, parsePipeAddress, pipeServer } from './pipe.js';

const [listenText, targetText] = process.argv.slice(2);
const listen = parsePipeAddress(listenText);
const target = parsePipeAddress(targetText);
if (!listen || !target || process.argv.length !== 4) {
  process.stderr.write(
    'usage: forwarder <listen: unix socket path | host:port> <target: unix socket path | host:port>\n',
  );
  process.exit(2);
}

const connectTarget = (t: PipeAddress) => ('path' in t ? connect(t.path) : connect(t.port, t.host));
const parent = process.ppid;
const { server, open } = pipeServer(() => connectTarget(target));

server.on('error', (err) => {
  process.stderr.write(`forwarder: ${err.message}\n`);
  process.exit(1);
});

const listening = (): void => {
  process.stdout.write(`forwarder: listening on ${formatPipeAddress(listen)} -> ${formatPipeAddress(target)}\n`);
};
if ('path' in listen) {
  rmSync(listen.path, { force: true });
  server.listen(listen.path, listening);
} else server.listen(listen.port, listen.host, listening);

const shutdown = (): void => {
  server.close();
  for (const s of open) s.destroy();
  process.exit(0);
};
process.on('SIGTERM', shutdown).on('SIGINT', shutdown);
setInterval(() => {
  if (process.ppid !== parent) shutdown();
}, 500).unref();
