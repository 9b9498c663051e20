/** JSON output of a tool, parsed; invalid JSON is a parse error naming the tool with a sample of what it printed. */
import { parseError } from './errors.js';

export function parseToolJson(tool: string, stdout: string): unknown {
  try {
    return JSON.parse(stdout);
  } catch (err) {
    throw parseError(tool, stdout, `invalid JSON: ${(err as Error).message}`);
  }
}
