import { readFileSync } from 'node:fs';

/** Reads a captured tool output from test/fixtures (tests run from dist/test/...). */
export function fixture(name: string): string {
  return readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), 'utf8');
}
