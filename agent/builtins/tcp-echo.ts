/**
 * Entry point of the built-in TCP request/response server that
 * agent/builtins/tcp-rr.ts measures against. Each connection announces its
 * request and response sizes and mode in a preamble (see
 * agent/builtins/tcp-rr-wire.ts); then every complete request of N bytes is answered
 * with M bytes. In TCP_CRR mode the server answers once and closes first, as
 * netperf's netserver does, so TIME_WAIT piles up here and not on the client's
 * ephemeral ports.
 *
 * It runs as its own process so the agent's event loop never competes with it.
 * Reporting, on stderr, one JSON line each: `{"event":"listening","port":P}`
 * once bound (port 0 picks a free one), and on SIGTERM/SIGINT
 * `{"event":"stopped","connections":C,"transactions":T,"protocolErrors":E}`
 * so a caller can check that a CRR run opened one connection per transaction.
 */
import { createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { decodeRrPreamble, RR_PREAMBLE_BYTES, type RrPreamble } from './tcp-rr-wire.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '12865' }, host: { type: 'string', default: '0.0.0.0' } },
});

const stats = { connections: 0, transactions: 0, protocolErrors: 0 };
const live = new Set<Socket>();
const responses = new Map<number, Buffer>();

function response(bytes: number): Buffer {
  let b = responses.get(bytes);
  if (!b) {
    b = Buffer.alloc(bytes, 0x72);
    responses.set(bytes, b);
  }
  return b;
}

function report(event: string, extra: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ tool: 'tcp-echo', event, ...extra })}\n`);
}

function serve(socket: Socket): void {
  stats.connections++;
  live.add(socket);
  socket.on('close', () => live.delete(socket));
  socket.on('error', () => undefined);
  let head: Buffer | undefined = Buffer.alloc(0);
  let p: RrPreamble | undefined;
  let pending = 0;
  let answered = false;
  const drop = (): void => {
    stats.protocolErrors++;
    socket.destroy();
  };
  socket.on('data', (chunk: Buffer) => {
    if (!p) {
      head = Buffer.concat([head!, chunk]);
      if (head.length < RR_PREAMBLE_BYTES) return;
      try {
        p = decodeRrPreamble(head);
      } catch {
        return drop();
      }
      pending = head.length - RR_PREAMBLE_BYTES;
      head = undefined;
    } else {
      pending += chunk.length;
    }
    while (pending >= p.requestBytes) {
      if (answered && p.closeAfterResponse) return drop();
      pending -= p.requestBytes;
      stats.transactions++;
      answered = true;
      if (p.closeAfterResponse) socket.end(response(p.responseBytes));
      else socket.write(response(p.responseBytes));
    }
  });
}

const server = createServer({ noDelay: true }, serve);
server.on('error', (err) => {
  report('error', { message: err.message, code: (err as NodeJS.ErrnoException).code });
  process.exitCode = 1;
});
server.listen(Number(values.port), values.host, () => {
  const addr = server.address();
  report('listening', { host: values.host, port: typeof addr === 'object' && addr ? addr.port : Number(values.port) });
});

const stop = (): void => {
  report('stopped', stats);
  server.close();
  for (const s of live) s.destroy();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
