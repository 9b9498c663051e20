/**
 * Opaque page tokens for the list endpoints: the position after the last item
 * of a page, base64url JSON. A token the server did not write is a 400 naming
 * `pageToken`, never a silent first page.
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';

export function encodePageToken(position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

function invalid(why: string): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `pageToken: ${why}`, { details: { field: 'pageToken' } });
}

/** Decodes a token written by encodePageToken with `shape` (one 'string' or 'number' per element). */
export function decodePageToken(token: string, shape: readonly ('string' | 'number')[]): (string | number)[] {
  if (token.length > 512 || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid('not a token this server wrote');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a token this server wrote');
  }
  if (
    !Array.isArray(value) ||
    value.length !== shape.length ||
    value.some((v, i) => typeof v !== shape[i] || (typeof v === 'number' && !Number.isSafeInteger(v)))
  )
    throw invalid('not a token this server wrote');
  return value as (string | number)[];
}

/** One page of `items` already sorted by `key`, starting after `after` (keyset paging over an in-memory list). */
export function pageByKey<T>(
  items: readonly T[],
  key: (t: T) => string,
  limit: number,
  token: string | undefined,
): { items: T[]; nextPageToken: string } {
  const after = token === undefined ? undefined : (decodePageToken(token, ['string'])[0] as string);
  const rest = after === undefined ? items : items.filter((t) => key(t) > after);
  const page = rest.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page, nextPageToken: rest.length > limit && last ? encodePageToken([key(last)]) : '' };
}
