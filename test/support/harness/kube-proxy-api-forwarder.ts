/**
 * The in-namespace half of the apiserver bridge (api-bridge.ts), run as
 * `ip netns exec <ns> node kube-proxy-api-forwarder.js <unix socket> <port>`:
 * listens on 127.0.0.1:<port> inside the namespace and pipes every connection
 * to the unix socket, whose other end (in the test process, root namespace)
 * pipes on to the apiserver. Bytes are not looked at; TLS is end to end.
 *
 * It prints one line when listening (the parent waits for it) and exits when
 * its parent (the test process; `ip netns exec` execs, so that is our parent)
 * is gone, so a killed test leaves no forwarder behind.
 */
import { connect, createServer, type Socket } from 'node:net';

const [socketPath, portText] = process.argv.slice(2);
const port = Number(portText);
if (!socketPath || !Number.isInteger(port) || port <= 0 || port > 65_535) {
  process.stderr.write('usage: kube-proxy-api-forwarder <unix socket> <port>\n');
  process.exit(2);
}

const parent = process.ppid;
const open = new Set<Socket>();

const server = createServer((client) => {
  const upstream = connect(socketPath);
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

server.listen(port, '127.0.0.1', () =>
  process.stdout.write(`forwarder: listening on 127.0.0.1:${port} -> ${socketPath}\n`),
);

const shutdown = (): void => {
  server.close();
  for (const s of open) s.destroy();
  process.exit(0);
};
process.on('SIGTERM', shutdown).on('SIGINT', shutdown);
setInterval(() => {
  if (process.ppid !== parent) shutdown();
}, 500).unref();
