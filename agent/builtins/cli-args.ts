/**
 * What the built-in clients share on their command line: the one JSON line
 * they end with when they cannot run (`{"tool", "error"}` on stdout, which the
 * drivers' parsers report), and the checks of their numeric flags, each
 * refusal naming the flag (exit 2).
 */

/** Prints `{"tool", "error", ...extra}` and exits with `code`. */
export function failWith(tool: string, code: number, error: string, extra: Record<string, unknown> = {}): never {
  process.stdout.write(`${JSON.stringify({ tool, error, ...extra })}\n`);
  process.exit(code);
}

/** `--name` as an integer in [min, max]; anything else ends the tool with exit 2. */
export function intFlag(tool: string, name: string, text: string | undefined, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    failWith(tool, 2, `--${name} must be an integer in [${min}, ${max}], got '${text ?? ''}'`);
  return n;
}

/** `--duration` as seconds in (0, 86400]. */
export function durationFlag(tool: string, text: string | undefined): number {
  const seconds = Number(text);
  if (!(seconds > 0 && seconds <= 86_400))
    failWith(tool, 2, `--duration must be seconds in (0, 86400], got '${text ?? ''}'`);
  return seconds;
}
