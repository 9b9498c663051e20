/**
 * The probe responder: answers peers' TCP probes (hello, then one byte per
 * request on a kept connection) and HTTP probes through the probe Service on
 * one port (see protocol.ts). It runs inside the agent for the pod network and
 * as its own small process in the node's host network namespace (pod-to-host
 * probes). Idle kept connections are closed, so a peer that went away leaves
 * nothing open.
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  helloLine,
  httpAnswer,
  MAX_HEAD_BYTES,
  parseHelloLine,
  parseHttpHead,
  RR_REQUEST,
  RR_RESPONSE,
} from './protocol.js';

export interface ResponderOptions {
  node: string;
  port: number;
  host?: string;
  /** Kept connections idle this long are closed (peers reconnect when they need one). */
  idleTimeoutMs: number;
  /** Called for every probe that named its source node. */
  onIncoming?: (source: string, kind: 'tcp' | 'http') => void;
}

const RESPONSE = Buffer.from([RR_RESPONSE]);

export class ProbeResponder {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly opts: ResponderOptions) {
    this.server = createServer({ noDelay: true }, (s) => this.serve(s));
  }

  /** Binds; resolves with the port (the configured one, or the one picked for 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => {
        this.server.off('error', reject);
        const a = this.server.address();
        resolve(typeof a === 'object' && a ? a.port : this.opts.port);
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setKeepAlive(true, 60_000);
    socket.setTimeout(this.opts.idleTimeoutMs, () => socket.destroy());
    let head = '';
    let raw = false;
    const onData = (chunk: Buffer): void => {
      if (raw) return this.answerRequests(socket, chunk);
      head += chunk.toString('latin1');
      if (head.length > MAX_HEAD_BYTES) return void socket.destroy();
      if (head.startsWith('CNIB')) {
        const nl = head.indexOf('\n');
        if (nl < 0) return;
        const source = parseHelloLine(head.slice(0, nl + 1));
        if (!source) return void socket.destroy();
        raw = true;
        this.opts.onIncoming?.(source, 'tcp');
        socket.write(helloLine(this.opts.node));
        const rest = Buffer.from(head.slice(nl + 1), 'latin1');
        if (rest.length) this.answerRequests(socket, rest);
        return;
      }
      if (!head.includes('\r\n\r\n') && !head.includes('\n\n')) return;
      socket.off('data', onData);
      try {
        const from = parseHttpHead(head).from;
        if (from) this.opts.onIncoming?.(from, 'http');
      } catch {
        // httpAnswer says 400.
      }
      socket.end(httpAnswer(head, this.opts.node));
    };
    socket.on('data', onData);
  }

  private answerRequests(socket: Socket, chunk: Buffer): void {
    for (const byte of chunk) {
      if (byte !== RR_REQUEST) return void socket.destroy();
      socket.write(RESPONSE);
    }
  }
}
