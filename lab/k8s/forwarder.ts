/**
 * The in-namespace half of the lab's path to its apiserver, run as
 * `ip netns exec <fabric ns> node forwarder.js <unix socket> <host> <port>`:
 * listens on a unix socket (a filesystem path, so the lab process in the root
 * namespace can connect to it) and pipes every connection to host:port inside
 * the namespace. Bytes are not looked at; TLS is end to end. Prints one line
 * when listening and exits when its parent (the lab process; `ip netns exec`
 * execs) is gone, so a killed lab leaves no forwarder behind.
 */

import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';

const [socketPath, host, portText] = process.argv.slice(2);
const port = Number(portText);
if (!socketPath || !host || !Number.isInteger(port) || port <= 0 || port > 65_535) {
  process.stderr.write('usage: forwarder <unix socket> <host> <port>\n');
  process.exit(2);
}

const parent = process.ppid;
const open = new Set<Socket>();

const server = createServer((client) => {
  const upstream = connect(port, host);
  open.add(client).add(upstream);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
    open.delete(client);
    open.delete(upstream);
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream).pipe(client);
});

server.on('error', (err) => {
  process.stderr.write(`forwarder: ${err.message}\n`);
  process.exit(1);
});

rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write(`forwarder: listening on ${socketPath} -> ${host}:${port}\n`));

const shutdown = (): void => {
  server.close();
  for (const s of open) s.destroy();
  process.exit(0);
};
process.on('SIGTERM', shutdown).on('SIGINT', shutdown);
setInterval(() => {
  if (process.ppid !== parent) shutdown();
}, 500).unref();
