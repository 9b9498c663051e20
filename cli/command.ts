/**
 * What a CLI command is: its flag schema (core/flags.ts) and a run function
 * that gets the parsed, frozen values. main.ts dispatches to commands, prints
 * `--help` from the schema, and maps errors to exit codes.
 */

import type { CommandSpec, FlagSet, FlagValues } from '../core/flags.js';
import type { Logger } from '../core/log.js';

export interface CliContext {
  log: Logger;
  stdout(text: string): void;
  env: NodeJS.ProcessEnv;
}

export interface Command<F extends FlagSet = FlagSet> {
  readonly spec: CommandSpec<F>;
  run(values: FlagValues<F>, positionals: readonly string[], ctx: CliContext): Promise<number>;
}

/** Keeps the flag types of one command together with its run function. */
export function defineCommand<F extends FlagSet>(command: Command<F>): Command<F> {
  return command;
}
