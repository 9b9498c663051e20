/**
 * The flags every remote command shares (where the collector is and how to
 * prove who we are) and the one function that turns them into a client.
 */
import { readFileSync } from 'node:fs';
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { flagError, stringFlag } from '../../core/flags.js';
import { CollectorClient } from './client.js';

export const remoteFlags = {
  collector: stringFlag({
    help: "the collector's REST address (http://HOST:PORT or https://HOST:PORT)",
    value: 'URL',
    default: undefined,
    env: 'CNI_BENCH_COLLECTOR',
  }),
  'token-file': stringFlag({
    help: "file holding the collector's operator token (the chart's Secret key 'token')",
    value: 'FILE',
    default: undefined,
    env: 'CNI_BENCH_TOKEN_FILE',
  }),
  'ca-file': stringFlag({
    help: "PEM CA bundle that signs the collector's REST certificate (https)",
    value: 'FILE',
    default: undefined,
    env: 'CNI_BENCH_CA_FILE',
  }),
};

export interface RemoteValues {
  collector: string | undefined;
  'token-file': string | undefined;
  'ca-file': string | undefined;
}

function readSmallFile(flag: string, path: string): Buffer {
  try {
    const b = readFileSync(path);
    if (b.length > 1024 * 1024) throw flagError(flag, `'${path}' is larger than 1 MiB`);
    return b;
  } catch (err) {
    if (err instanceof CniBenchError) throw err;
    throw flagError(
      flag,
      `cannot read '${path}' (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      err,
    );
  }
}

/** The base URL as given, checked: http or https, a host, no credentials, query or fragment. */
export function parseCollectorUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw flagError('--collector', `not a URL: '${text.slice(0, 200)}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw flagError('--collector', `must be http:// or https://, got '${u.protocol}'`);
  if (u.username || u.password) throw flagError('--collector', 'must not carry credentials (use --token-file)');
  if (u.search || u.hash) throw flagError('--collector', 'must not carry a query or fragment');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}/`;
}

/** A client for the collector the flags name; throws E_VALIDATION naming --collector when none is given. */
export function connect(v: RemoteValues): CollectorClient {
  if (!v.collector)
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      '--collector: required (or CNI_BENCH_COLLECTOR); e.g. --collector http://127.0.0.1:8080',
      { details: { field: '--collector' } },
    );
  const url = parseCollectorUrl(v.collector);
  const token = v['token-file'] ? readSmallFile('--token-file', v['token-file']).toString('utf8').trim() : undefined;
  if (v['token-file'] && !token) throw flagError('--token-file', `'${v['token-file']}' is empty`);
  const ca = v['ca-file'] ? readSmallFile('--ca-file', v['ca-file']) : undefined;
  return new CollectorClient({ url, ...(token ? { token } : {}), ...(ca ? { ca } : {}) });
}
