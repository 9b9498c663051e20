/**
 * Every benchmark writes what it printed into docs/findings/ as a dated file
 * with the command that produced it and the facts of the machine it ran on,
 * so figures reach the docs from a run, never by hand. CNI_BENCH_FINDINGS=0
 * prints only.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** docs/findings/ of the repository (benchmarks run from dist/bench/). */
export const FINDINGS_DIR = fileURLToPath(new URL('../../docs/findings/', import.meta.url));

export interface Findings {
  /** The benchmark's name, e.g. "sweep-cost"; part of the file name. */
  bench: string;
  title: string;
  /** What the benchmark printed (Markdown). */
  body: string;
}

/** The machine a figure came from: read when the benchmark ends, load average included. */
export function machineFacts(): string[] {
  const cpu = cpus();
  return [
    `- kernel ${release()}, ${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown model'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node ${process.version}; load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  ];
}

/** The command as typed (npm run bench:... -- args), from the script's own arguments. */
export function commandLine(bench: string): string {
  const args = process.argv.slice(2);
  return `npm run bench:${bench}${args.length ? ` -- ${args.join(' ')}` : ''}`;
}

/** Writes docs/findings/<date>-<bench>.md (a second run the same day replaces it) and returns its path, or undefined when turned off. */
export async function writeFindings(f: Findings, now = new Date(), dir = FINDINGS_DIR): Promise<string | undefined> {
  if (process.env.CNI_BENCH_FINDINGS === '0') return undefined;
  const day = now.toISOString().slice(0, 10);
  const path = join(dir, `${day}-${f.bench}.md`);
  const text = [
    `# ${f.title} (${day})`,
    '',
    `Written by \`${commandLine(f.bench)}\` at ${now.toISOString()}.`,
    '',
    ...machineFacts(),
    '',
    f.body.trim(),
    '',
  ].join('\n');
  await mkdir(dir, { recursive: true });
  await writeFile(path, text);
  process.stderr.write(`findings written to ${relative(process.cwd(), path)}\n`);
  return path;
}
