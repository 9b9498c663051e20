/**
 * The agent key: the secret node tokens are derived from. Read once at
 * start-up; a key shorter than 32 bytes is refused (a guessable key would let
 * anyone mint any node's token).
 */
import { CniBenchError, ErrorCodes } from '../../core/errors.js';
import { readConfigFile } from '../config.js';

export function loadAgentKey(path: string): Buffer {
  const key = Buffer.from(readConfigFile('agentKeyFile', path).toString('utf8').trim(), 'utf8');
  if (key.length < 32) {
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `invalid collector config: agentKeyFile: '${path}' holds ${key.length} bytes; it needs at least 32 (e.g. openssl rand -hex 32)`,
      {
        details: { field: 'agentKeyFile', path },
      },
    );
  }
  return key;
}
