import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Reads a captured tool output from test/fixtures (tests run from dist/test/...). */
export function fixture(name: string): string {
  return readFileSync(new URL(`../../../../test/fixtures/${name}`, import.meta.url), 'utf8');
}

/** The repository's root (tests run from dist/test/...). */
export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
