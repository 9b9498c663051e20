/**
 * The probe wire protocol, pure so both ends and the tests share it. One TCP
 * port speaks two things, told apart by the first bytes:
 *
 *   raw   client `CNIB1 <source-node>\n`, responder `CNIB1 <own-node>\n`; then
 *         each request byte `p` is answered with one byte `q` (kept connection)
 *   HTTP  `GET /probe?from=<source-node>` answered `{"node":"<own-node>"}` with
 *         `Connection: close` (every Service probe is a new connection, so the
 *         service proxy translates each one)
 *
 * Error reasons are a closed set, so they can be Prometheus label values.
 */
export const HELLO_PREFIX = 'CNIB1 ';
export const RR_REQUEST = 0x70;
export const RR_RESPONSE = 0x71;
/** Longest request head or hello line a responder reads before giving up on a connection. */
export const MAX_HEAD_BYTES = 4096;

export const PROBE_TYPES = ['tcp-connect', 'tcp-rr', 'host-tcp-connect', 'host-tcp-rr', 'http-service'] as const;
export type ProbeType = (typeof PROBE_TYPES)[number];

export const ERROR_REASONS = [
  'timeout',
  'refused',
  'unreachable',
  'reset',
  'wrong-node',
  'bad-response',
  'http-status',
  'other',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** Kubernetes node names are DNS subdomains; anything else is refused on the wire. */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

export function isNodeName(name: string): boolean {
  return NODE_NAME.test(name);
}

/** A probe that failed for a protocol reason (the peer answered, but wrongly). */
export class ProbeFailure extends Error {
  constructor(
    readonly reason: ErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'ProbeFailure';
  }
}

export function helloLine(node: string): string {
  if (!isNodeName(node)) throw new ProbeFailure('other', `not a node name: ${JSON.stringify(node)}`);
  return `${HELLO_PREFIX}${node}\n`;
}

/** The node a hello line names, or undefined when it is not one. */
export function parseHelloLine(line: string): string | undefined {
  if (!line.startsWith(HELLO_PREFIX)) return undefined;
  const node = line.slice(HELLO_PREFIX.length).replace(/\r?\n$/, '');
  return isNodeName(node) ? node : undefined;
}

export function probeRequestPath(from: string): string {
  return `/probe?from=${encodeURIComponent(from)}`;
}

/** The source node of an HTTP request head, undefined for any other path; throws on a head that is not HTTP. */
export function parseHttpHead(head: string): { path: string; from: string | undefined } {
  const m = /^(GET|HEAD) (\S+) HTTP\/1\.[01]\r?$/m.exec(head.split('\n', 1)[0] ?? '');
  if (!m) throw new ProbeFailure('bad-response', 'not an HTTP/1.x GET');
  const url = new URL(m[2] as string, 'http://probe');
  const from = url.pathname === '/probe' ? (url.searchParams.get('from') ?? '') : undefined;
  return { path: url.pathname, from: from !== undefined && isNodeName(from) ? from : undefined };
}

/** The responder's full HTTP answer for a request head. */
export function httpAnswer(head: string, node: string): string {
  let status = '200 OK';
  let body = `${JSON.stringify({ node })}\n`;
  try {
    if (parseHttpHead(head).path !== '/probe') [status, body] = ['404 Not Found', 'not found\n'];
  } catch {
    [status, body] = ['400 Bad Request', 'bad request\n'];
  }
  return `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The node named by a probe response body. */
export function parseProbeBody(text: string): string {
  let node: unknown;
  try {
    node = (JSON.parse(text) as { node?: unknown }).node;
  } catch {
    throw new ProbeFailure('bad-response', `probe response is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  if (typeof node !== 'string' || !isNodeName(node))
    throw new ProbeFailure('bad-response', 'probe response names no node');
  return node;
}

/** Maps any probe error to its reason label. */
export function probeErrorReason(err: unknown): ErrorReason {
  if (err instanceof ProbeFailure) return err.reason;
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case 'ETIMEDOUT':
    case 'E_TIMEOUT':
      return 'timeout';
    case 'ECONNREFUSED':
      return 'refused';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
    case 'EADDRNOTAVAIL':
      return 'unreachable';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return 'reset';
    default:
      return 'other';
  }
}
