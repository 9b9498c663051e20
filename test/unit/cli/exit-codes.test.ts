/**
 * Exit codes are documented (issue 17 item 2): every command the CLI lists in
 * its --help, and both daemons, end their help with an "Exit codes:" line, and
 * docs/exit-codes.md carries that same line, so the page cannot drift from
 * what the programs say.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_MAIN, CLI_MAIN, COLLECTOR_MAIN, DIST } from '../../support/helpers/procs.js';

const run = promisify(execFile);
const DOC = readFileSync(new URL('docs/exit-codes.md', `file://${DIST}../`), 'utf8');

async function help(main: string, words: string[]): Promise<string> {
  return (await run(process.execPath, [main, ...words, '--help'])).stdout;
}

function exitLine(text: string, who: string): string {
  const line = text.split('\n').find((l) => l.startsWith('Exit codes: '));
  assert.ok(line, `${who} --help has no "Exit codes:" line`);
  return line.slice('Exit codes: '.length);
}

test('every command and daemon has an example and its exit codes in --help, and the codes in docs/exit-codes.md', async () => {
  const root = await help(CLI_MAIN, []);
  const section = root.split('\ncommands:\n')[1]?.split('\n\n')[0] ?? '';
  const commands = section
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/)[0] ?? '')
    .filter(Boolean);
  assert.ok(commands.includes('lab') && commands.includes('compare'), section);
  const programs: [string, string, string[]][] = [
    ['cni-bench', CLI_MAIN, []],
    ...commands.map((c): [string, string, string[]] => [`cni-bench ${c}`, CLI_MAIN, c.split(' ')]),
    ['cni-bench-agent', AGENT_MAIN, []],
    ['cni-bench-collector', COLLECTOR_MAIN, []],
  ];
  for (const [name, main, words] of programs) {
    const text = await help(main, words);
    assert.match(text, /\nexamples?:\n {2}\S/, `${name} --help has no example`);
    const codes = exitLine(text, name);
    assert.match(codes, /^0 /, `${name}: ${codes}`);
    const want = `- \`${name}\`: ${codes}`;
    assert.ok(DOC.includes(want), `docs/exit-codes.md lacks the line:\n${want}`);
  }
});
