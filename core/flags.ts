/**
 * A command's flags declared once, as data: each with its parser, default,
 * environment variable and help text side by side. From that one declaration
 * come the parsed, frozen values, the errors that name the flag (exit code 2)
 * and the `--help` text, so help can never drift from what is parsed.
 */
import { parseArgs } from 'node:util';
import { CniBenchError, ErrorCodes } from './errors.js';

export interface Flag<T> {
  readonly help: string;
  /** Placeholder for the value in help, e.g. "N" or "iptables|nftables"; absent for a switch. */
  readonly value?: string;
  /** Used when the flag is absent (after `env`). */
  readonly default: T;
  /** How the default reads in help when the value itself does not say it (e.g. "~/.local/state/..."). */
  readonly defaultText?: string;
  /** An environment variable that sets the value when the flag is absent. */
  readonly env?: string;
  /** True for a switch (`--json`): no value, true when present. */
  readonly boolean?: boolean;
  parse(text: string, name: string): T;
}

export type FlagSet = Readonly<Record<string, Flag<unknown>>>;
export type FlagValues<F extends FlagSet> = { readonly [K in keyof F]: F[K] extends Flag<infer T> ? T : never };

export interface CommandSpec<F extends FlagSet = FlagSet> {
  /** As typed, e.g. "cni-bench lab sweep". */
  readonly usage: string;
  readonly summary: string;
  readonly flags: F;
  /** Positional arguments, e.g. "RUN|REPORT.json RUN|REPORT.json..."; absent: none are taken. */
  readonly positionals?: string;
  /** Environment variables read besides the flags' own. */
  readonly env?: readonly { name: string; help: string }[];
  readonly subcommands?: readonly { name: string; summary: string }[];
  readonly examples: readonly string[];
  /** Further paragraphs after the flags. */
  readonly notes?: readonly string[];
}

export interface Parsed<F extends FlagSet> {
  /** --help or -h was given: print helpText and exit 0, nothing else was checked. */
  readonly help: boolean;
  /** --version was given (and no --help): print the version and exit 0. */
  readonly version: boolean;
  readonly values: FlagValues<F>;
  readonly positionals: readonly string[];
}

/** E_VALIDATION that starts with the flag's name, e.g. "--nodes: must be an integer >= 2, got 'x'". */
export function flagError(name: string, message: string, cause?: unknown): CniBenchError {
  return new CniBenchError(ErrorCodes.VALIDATION, `${name}: ${message}`, {
    ...(cause ? { cause } : {}),
    details: { field: name, issues: [{ path: name, message }] },
  });
}

/** A number >= min (an integer when asked). */
export function numberFlag<D extends number | undefined>(o: {
  help: string;
  default: D;
  min: number;
  integer?: boolean;
  value?: string;
  env?: string;
}): Flag<number | D> {
  return {
    help: o.help,
    value: o.value ?? 'N',
    default: o.default,
    ...(o.env ? { env: o.env } : {}),
    parse(text, name) {
      const v = Number(text);
      if (text.trim() === '' || !Number.isFinite(v) || v < o.min || (o.integer && !Number.isInteger(v)))
        throw flagError(name, `must be ${o.integer ? 'an integer' : 'a number'} >= ${o.min}, got '${text}'`);
      return v;
    },
  };
}

export function stringFlag<D extends string | undefined>(o: {
  help: string;
  default: D;
  value?: string;
  env?: string;
  defaultText?: string;
}): Flag<string | D> {
  return {
    help: o.help,
    value: o.value ?? 'TEXT',
    default: o.default,
    ...(o.env ? { env: o.env } : {}),
    ...(o.defaultText ? { defaultText: o.defaultText } : {}),
    parse: (text) => text,
  };
}

export function switchFlag(o: { help: string }): Flag<boolean> {
  return { help: o.help, default: false, boolean: true, parse: () => true };
}

export function oneOfFlag<T extends string>(allowed: readonly T[], o: { help: string; default: T }): Flag<T> {
  return {
    help: o.help,
    value: allowed.join('|'),
    default: o.default,
    parse(text, name) {
      if (!(allowed as readonly string[]).includes(text))
        throw flagError(name, `must be one of ${allowed.join(', ')}, got '${text}'`);
      return text as T;
    },
  };
}

/** A comma-separated list whose items each pass `item`. */
export function listFlag<T>(
  item: (text: string, name: string) => T,
  o: { help: string; default: readonly T[]; value: string },
): Flag<readonly T[]> {
  return {
    help: o.help,
    value: o.value,
    default: Object.freeze([...o.default]),
    parse(text, name) {
      const parts = text.split(',').map((t) => t.trim());
      if (!text.trim() || parts.some((p) => p === ''))
        throw flagError(name, `must be a comma-separated list, got '${text}'`);
      return Object.freeze(parts.map((p) => item(p, name)));
    },
  };
}

/** Any parser of the caller's (an existing domain parser that names the field itself). */
export function customFlag<T>(o: {
  help: string;
  value: string;
  default: T;
  defaultText?: string;
  parse(text: string, name: string): T;
}): Flag<T> {
  return o;
}

/** A node:util parseArgs error as E_VALIDATION naming the flag (`--bogus`, `-x`). */
function argsError(err: Error & { code?: string }, usage: string): CniBenchError {
  const name = /'(-{1,2}[\w-]+)/.exec(err.message)?.[1] ?? 'arguments';
  const what: Record<string, string> = {
    ERR_PARSE_ARGS_UNKNOWN_OPTION: 'unknown flag',
    ERR_PARSE_ARGS_INVALID_OPTION_VALUE: 'needs a value',
  };
  return flagError(name, `${what[err.code ?? ''] ?? err.message.split('. ')[0]} (see ${usage} --help)`, err);
}

const NONE = Object.freeze({});

/**
 * Parses argv against the spec. Unknown flags, missing values and bad values
 * throw E_VALIDATION naming the flag; `--help`/`-h` wins over everything else.
 */
export function parseFlags<F extends FlagSet>(
  spec: CommandSpec<F>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Parsed<F> {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean' },
  };
  for (const [name, flag] of Object.entries(spec.flags)) options[name] = { type: flag.boolean ? 'boolean' : 'string' };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (err) {
    if (argv.includes('--help') || argv.includes('-h'))
      return { help: true, version: false, values: NONE as FlagValues<F>, positionals: [] };
    throw argsError(err as Error, spec.usage);
  }
  if (parsed.values.help || parsed.values.version)
    return {
      help: parsed.values.help === true,
      version: !parsed.values.help,
      values: NONE as FlagValues<F>,
      positionals: [],
    };
  if (!spec.positionals && parsed.positionals.length) {
    throw flagError(parsed.positionals[0] as string, `unexpected argument (${spec.usage} takes none; see --help)`);
  }
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(spec.flags)) {
    const given = parsed.values[name];
    if (flag.boolean) values[name] = given === true;
    else if (typeof given === 'string') values[name] = flag.parse(given, `--${name}`);
    else if (flag.env && env[flag.env] !== undefined && env[flag.env] !== '')
      values[name] = flag.parse(env[flag.env] as string, flag.env);
    else values[name] = flag.default;
  }
  return {
    help: false,
    version: false,
    values: Object.freeze(values) as FlagValues<F>,
    positionals: Object.freeze([...parsed.positionals]),
  };
}

function defaultOf(flag: Flag<unknown>): string {
  if (flag.defaultText) return flag.defaultText;
  const d = flag.default;
  if (flag.boolean || d === undefined) return '';
  return Array.isArray(d) ? d.join(',') : String(d);
}

/** The `--help` text: usage, summary, subcommands, flags with defaults and env vars, environment, examples. */
export function helpText(spec: CommandSpec): string {
  const out = [
    `usage: ${spec.usage}${spec.subcommands?.length ? ' [COMMAND]' : ''} [FLAGS]${spec.positionals ? ` ${spec.positionals}` : ''}`,
    '',
    spec.summary,
    '',
  ];
  if (spec.subcommands?.length) {
    const w = Math.max(...spec.subcommands.map((s) => s.name.length));
    out.push('commands:', ...spec.subcommands.map((s) => `  ${s.name.padEnd(w)}  ${s.summary}`), '');
  }
  const rows = Object.entries(spec.flags).map(([name, f]) => {
    const extra = [defaultOf(f) && `default ${defaultOf(f)}`, f.env && `env ${f.env}`].filter(Boolean).join('; ');
    return [`--${name}${f.value ? ` ${f.value}` : ''}`, `${f.help}${extra ? ` (${extra})` : ''}`] as [string, string];
  });
  rows.push(['-h, --help', 'print this help and exit'], ['--version', 'print the version and exit']);
  const w = Math.max(...rows.map((r) => r[0].length));
  out.push('flags:', ...rows.map(([l, r]) => `  ${l.padEnd(w)}  ${r}`), '');
  if (spec.env?.length) {
    const ew = Math.max(...spec.env.map((e) => e.name.length));
    out.push('environment:', ...spec.env.map((e) => `  ${e.name.padEnd(ew)}  ${e.help}`), '');
  }
  for (const n of spec.notes ?? []) out.push(n, '');
  out.push(spec.examples.length > 1 ? 'examples:' : 'example:', ...spec.examples.map((e) => `  ${e}`), '');
  return out.join('\n');
}

/**
 * A flag described for help only: the daemons parse their config with their
 * own schema (agent/config.ts, collector/config.ts) and describe it here.
 */
export function describedFlag(o: {
  help: string;
  value?: string;
  default: unknown;
  env?: string;
  boolean?: boolean;
}): Flag<unknown> {
  const shown = o.default === '' || (Array.isArray(o.default) && o.default.length === 0) ? undefined : o.default;
  return { ...o, default: shown, ...(o.boolean ? { boolean: true } : {}), parse: (text) => text };
}

/** `--help`/`-h` or `--version` among a daemon's arguments, checked before its config is read. */
export function infoRequest(argv: readonly string[]): 'help' | 'version' | undefined {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  return argv.includes('--version') ? 'version' : undefined;
}

/** A config schema's field as far as help needs it (a zod schema's shape entries are such). */
export interface DefaultSource {
  safeParse(value: undefined): { success: boolean; data?: unknown };
}

/**
 * `--help` for a daemon: one row per config field with its flag, environment
 * variable, placeholder and help, and the default its schema gives (parsed
 * from nothing, so help cannot drift from what the daemon uses).
 */
export function configHelpText<K extends string>(o: {
  spec: Omit<CommandSpec, 'flags'>;
  help: Readonly<Record<K, readonly [value: string, help: string]>>;
  flag(field: K): string;
  env: Readonly<Record<K, string>>;
  shape: Readonly<Record<K, DefaultSource>>;
  extra?: Readonly<Record<string, Flag<unknown>>>;
}): string {
  const flags: Record<string, Flag<unknown>> = {};
  for (const field of Object.keys(o.help) as K[]) {
    const [value, help] = o.help[field];
    const parsed = o.shape[field].safeParse(undefined);
    flags[o.flag(field)] = describedFlag({
      help,
      default: parsed.success ? parsed.data : undefined,
      env: o.env[field],
      ...(value ? { value } : { boolean: true }),
    });
  }
  return helpText({ ...o.spec, flags: { ...flags, ...o.extra } });
}
