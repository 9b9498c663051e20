/**
 * The built-in tcp-rr's wire format, shared by its client (tcp-rr.ts) and
 * server (tcp-echo.ts), and pure so both ends are tested on bytes alone.
 * Every connection starts with a 16-byte preamble sent in the same write as
 * the first request, so it costs no extra round trip:
 *   0..3 "CBRR" | 4 version 1 | 5 flags (bit 0: server closes after one
 *   response, TCP_CRR) | 6..7 zero | 8..11 request bytes | 12..15 response
 *   bytes (unsigned 32-bit big-endian).
 * One server thus serves any mix of sizes and modes without being configured.
 */
export const RR_PREAMBLE_BYTES = 16;
/** Largest request or response either side accepts (a bound on the server's memory per connection). */
export const RR_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const MAGIC = 'CBRR';
const VERSION = 1;
const FLAG_CLOSE = 1;

export interface RrPreamble {
  requestBytes: number;
  responseBytes: number;
  /** TCP_CRR: the server answers once, then closes (it closes first, as netperf's netserver does). */
  closeAfterResponse: boolean;
}

function checkSize(n: number, what: string): void {
  if (!Number.isInteger(n) || n < 1 || n > RR_MAX_MESSAGE_BYTES)
    throw new Error(`${what} must be an integer in [1, ${RR_MAX_MESSAGE_BYTES}], got ${n}`);
}

export function encodeRrPreamble(p: RrPreamble): Buffer {
  checkSize(p.requestBytes, 'request bytes');
  checkSize(p.responseBytes, 'response bytes');
  const b = Buffer.alloc(RR_PREAMBLE_BYTES);
  b.write(MAGIC, 0, 'latin1');
  b[4] = VERSION;
  b[5] = p.closeAfterResponse ? FLAG_CLOSE : 0;
  b.writeUInt32BE(p.requestBytes, 8);
  b.writeUInt32BE(p.responseBytes, 12);
  return b;
}

/** Throws a plain Error on anything that is not a version-1 preamble (the server drops such connections). */
export function decodeRrPreamble(b: Buffer): RrPreamble {
  if (b.length < RR_PREAMBLE_BYTES) throw new Error(`preamble needs ${RR_PREAMBLE_BYTES} bytes, got ${b.length}`);
  if (b.toString('latin1', 0, 4) !== MAGIC || b[4] !== VERSION) throw new Error('not a tcp-rr version 1 preamble');
  const p = {
    requestBytes: b.readUInt32BE(8),
    responseBytes: b.readUInt32BE(12),
    closeAfterResponse: ((b[5] ?? 0) & FLAG_CLOSE) !== 0,
  };
  checkSize(p.requestBytes, 'request bytes');
  checkSize(p.responseBytes, 'response bytes');
  return p;
}
