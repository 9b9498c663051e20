/**
 * The probes themselves, timed with the monotonic clock: a TCP connect (time
 * to the established connection; the hello exchange after it checks that the
 * right node answered), one request/response on a kept connection, and an HTTP
 * request through the probe Service on a new connection. Each settles within
 * its timeout, and a failure is an error that probeErrorReason() can name.
 */
import { connect, type Socket } from 'node:net';
import {
  helloLine,
  ProbeFailure,
  parseHelloLine,
  parseProbeBody,
  probeRequestPath,
  RR_REQUEST,
  RR_RESPONSE,
} from './protocol.js';

export interface ProbeEndpoint {
  host: string;
  port: number;
  /** The node that must answer (a wrong one is a `wrong-node` failure). */
  node: string;
}

function timeoutError(what: string, ms: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`${what}: no answer within ${ms} ms`), { code: 'ETIMEDOUT' });
}

function noop(): void {}

function elapsedUs(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1000;
}

/** Reads one line from a socket (the hello answer), failing on close, error or an overlong line. */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer): void => {
      buf += c.toString('latin1');
      const nl = buf.indexOf('\n');
      if (nl >= 0) done(undefined, buf.slice(0, nl + 1));
      else if (buf.length > 512) done(new ProbeFailure('bad-response', 'hello answer too long'));
    };
    const onEnd = (): void => done(new ProbeFailure('bad-response', 'closed before the hello answer'));
    const done = (err: Error | undefined, line = ''): void => {
      socket.off('data', onData).off('end', onEnd).off('error', done);
      if (err) reject(err);
      else resolve(line);
    };
    socket.on('data', onData).once('end', onEnd).once('error', done);
  });
}

/** Connects, exchanges hellos and checks the answering node; resolves with the socket and the connect time. */
async function open(
  to: ProbeEndpoint,
  from: string,
  timeoutMs: number,
): Promise<{ socket: Socket; connectUs: number }> {
  const t0 = process.hrtime.bigint();
  const socket = connect({ host: to.host, port: to.port, noDelay: true });
  // Errors are handled by the listeners below; this one keeps a late one from crashing the agent.
  socket.on('error', noop);
  const timer = setTimeout(() => socket.destroy(timeoutError(`connect ${to.host}:${to.port}`, timeoutMs)), timeoutMs);
  try {
    let reject0: (err: Error) => void = noop;
    const connectUs = await new Promise<number>((resolve, reject) => {
      reject0 = reject;
      socket.once('connect', () => resolve(elapsedUs(t0))).once('error', reject);
    });
    socket.off('error', reject0);
    const answer = readLine(socket);
    socket.write(helloLine(from));
    const node = parseHelloLine(await answer);
    if (node !== to.node)
      throw new ProbeFailure(
        'wrong-node',
        `${to.host}:${to.port} answered as ${node ?? 'nothing'}, expected ${to.node}`,
      );
    return { socket, connectUs };
  } catch (err) {
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** TCP connect time to a peer's responder, in microseconds. */
export async function tcpConnectProbe(to: ProbeEndpoint, from: string, timeoutMs: number): Promise<number> {
  const { socket, connectUs } = await open(to, from, timeoutMs);
  socket.end();
  return connectUs;
}

/**
 * One kept connection to a peer's responder: opened on first use (not timed),
 * then each probe times one request byte and its answer. Any failure closes it;
 * the next probe opens a new one.
 */
export class KeptConnection {
  private socket: Socket | undefined;

  constructor(
    private readonly to: ProbeEndpoint,
    private readonly from: string,
  ) {}

  async requestResponse(timeoutMs: number): Promise<number> {
    const began = Date.now();
    this.socket ??= (await open(this.to, this.from, timeoutMs)).socket;
    const socket = this.socket;
    const left = Math.max(1, timeoutMs - (Date.now() - began));
    try {
      return await new Promise<number>((resolve, reject) => {
        let t0 = process.hrtime.bigint();
        const timer = setTimeout(
          () => done(timeoutError(`request to ${this.to.host}:${this.to.port}`, timeoutMs)),
          left,
        );
        const onData = (c: Buffer): void =>
          c.length === 1 && c[0] === RR_RESPONSE
            ? done(undefined)
            : done(new ProbeFailure('bad-response', 'unexpected answer bytes'));
        const onClose = (): void => done(Object.assign(new Error('connection closed'), { code: 'ECONNRESET' }));
        const done = (err: Error | undefined): void => {
          clearTimeout(timer);
          socket.off('data', onData).off('close', onClose).off('error', done);
          if (err) reject(err);
          else resolve(elapsedUs(t0));
        };
        socket.on('data', onData).once('close', onClose).once('error', done);
        t0 = process.hrtime.bigint();
        socket.write(Buffer.from([RR_REQUEST]));
      });
    } catch (err) {
      this.close();
      throw err;
    }
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }
}

/** An HTTP GET through the probe Service on a new connection; resolves with the time to the full answer and the node that answered. */
export function httpServiceProbe(
  ip: string,
  port: number,
  from: string,
  timeoutMs: number,
): Promise<{ us: number; node: string }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const socket = connect({ host: ip, port, noDelay: true });
    socket.on('error', noop);
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => socket.destroy(timeoutError(`GET ${ip}:${port}`, timeoutMs)), timeoutMs);
    socket.on('connect', () =>
      socket.write(`GET ${probeRequestPath(from)} HTTP/1.1\r\nHost: ${ip}:${port}\r\nConnection: close\r\n\r\n`),
    );
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 8192) socket.destroy(new ProbeFailure('bad-response', 'HTTP answer too long'));
      else chunks.push(c);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once('end', () => {
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve({ us: elapsedUs(t0), node: parseHttpAnswer(Buffer.concat(chunks).toString('latin1')) });
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** The answering node of a complete HTTP answer; a non-200 status is an `http-status` failure. */
export function parseHttpAnswer(text: string): string {
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
  if (!status) throw new ProbeFailure('bad-response', 'not an HTTP answer');
  if (status !== '200') throw new ProbeFailure('http-status', `HTTP ${status}`);
  const sep = text.indexOf('\r\n\r\n');
  return parseProbeBody(sep < 0 ? '' : text.slice(sep + 4));
}
