/**
 * Test support: a small pure reader of a Dockerfile, enough to say what its
 * stages install: the packages of each `apt-get install` in a RUN, and the
 * files each `COPY --from=<stage>` puts where. Not a general parser: it knows
 * line continuations, comments, shell and JSON forms, and WORKDIR.
 */
import { posix } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
  /** 1-based line where the instruction starts. */
  line: number;
}

export interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface CopiedFile {
  fromStage: string;
  source: string;
  /** Absolute path in the image. */
  target: string;
  line: number;
}

/** Joins continued lines and drops comments (inside a continuation too, as docker does). */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let parts: string[] = [];
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && parts.length > 0)) return;
    if (trimmed === '') return;
    if (parts.length === 0) start = i + 1;
    const continued = trimmed.endsWith('\\');
    parts.push(continued ? trimmed.slice(0, -1).trim() : trimmed);
    if (continued) return;
    const whole = parts.join(' ');
    parts = [];
    const m = /^(\S+)\s*(.*)$/.exec(whole);
    if (m) out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!, line: start });
  });
  if (parts.length) throw new Error(`Dockerfile ends inside a continued line that starts at line ${start}`);
  return out;
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions(text)) {
    if (ins.keyword === 'FROM') {
      const words = ins.args.split(/\s+/).filter((w) => !w.startsWith('--'));
      const as = words.findIndex((w) => w.toLowerCase() === 'as');
      stages.push({ image: words[0] ?? '', name: as >= 0 ? words[as + 1] : undefined, instructions: [] });
    } else if (stages.length) {
      stages.at(-1)!.instructions.push(ins);
    } else if (ins.keyword !== 'ARG') {
      throw new Error(`line ${ins.line}: ${ins.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** The words of an instruction: its --flags, then its JSON array or its shell text split on blanks with quotes removed. */
function words(args: string): string[] {
  const flags = /^(?:--\S+\s+)*/.exec(args)![0];
  const rest = args.slice(flags.length);
  const tail = rest.startsWith('[')
    ? (JSON.parse(rest) as string[])
    : rest
        .split(/\s+/)
        .filter(Boolean)
        .map((w) => w.replace(/^["']|["']$/g, ''));
  return [...flags.split(/\s+/).filter(Boolean), ...tail];
}

/** Packages named by every `apt-get install` (or `apt install`) in the stage's RUN instructions. */
export function aptPackages(stage: Stage): string[] {
  const out: string[] = [];
  for (const ins of stage.instructions.filter((i) => i.keyword === 'RUN')) {
    const script = ins.args.startsWith('[') ? words(ins.args).join(' ') : ins.args;
    for (const command of script.split(/&&|\|\||;|\|/)) {
      const w = words(command.trim());
      while (w.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift();
      if (w[0] !== 'apt-get' && w[0] !== 'apt') continue;
      const install = w.indexOf('install');
      if (install < 0) continue;
      out.push(
        ...w
          .slice(install + 1)
          .filter((x) => !x.startsWith('-'))
          .map((x) => x.replace(/[=:].*$/, '')),
      );
    }
  }
  return out;
}

/** Files the stage copies from other stages, with where each lands. */
export function copiedFromStages(stage: Stage): CopiedFile[] {
  const out: CopiedFile[] = [];
  let workdir = '/';
  for (const ins of stage.instructions) {
    if (ins.keyword === 'WORKDIR') workdir = posix.resolve(workdir, words(ins.args)[0] ?? '.');
    if (ins.keyword !== 'COPY') continue;
    const all = words(ins.args);
    const from = all.find((w) => w.startsWith('--from='))?.slice('--from='.length);
    const paths = all.filter((w) => !w.startsWith('--'));
    if (!from || paths.length < 2) continue;
    const dest = paths.at(-1)!;
    const sources = paths.slice(0, -1);
    const intoDir = dest.endsWith('/') || sources.length > 1;
    for (const source of sources) {
      const target = posix.resolve(workdir, intoDir ? posix.join(dest, posix.basename(source)) : dest);
      out.push({ fromStage: from, source, target, line: ins.line });
    }
  }
  return out;
}
