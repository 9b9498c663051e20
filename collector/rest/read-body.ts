/** The request body as JSON, bounded; too large or not JSON is a 400 naming `body`. */
import type { IncomingMessage } from 'node:http';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export const MAX_BODY = 1024 * 1024;

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY)
      throw new CniBenchError(ErrorCodes.VALIDATION, `body: larger than ${MAX_BODY} bytes`, {
        details: { field: 'body' },
      });
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CniBenchError(ErrorCodes.VALIDATION, `body: not valid JSON (${(err as Error).message})`, {
      details: { field: 'body' },
    });
  }
}
