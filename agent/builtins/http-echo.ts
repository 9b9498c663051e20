/**
 * Entry point of the built-in HTTP server that HTTP load generators hit: a small
 * fixed body, keep-alive and `Connection: close` honoured, 404 on /missing (so
 * non-2xx accounting can be tested). It runs as its own process, started by the
 * agent through core/process.ts, so the agent's event loop never competes with
 * the server being measured.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const BODY = Buffer.from('cni-bench\n');
const { values } = parseArgs({
  options: { port: { type: 'string', default: '8080' }, host: { type: 'string', default: '0.0.0.0' } },
});

const server = createServer((req, res) => {
  req.resume();
  res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain', 'content-length': BODY.length });
  res.end(BODY);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), values.host);

const stop = (): void => {
  server.close();
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
