/**
 * `cni-bench scenario schema` prints the JSON Schema of scenario files
 * (generated from the one zod schema; docs/scenario.schema.json is this
 * output); `cni-bench scenario check FILE` validates a JSON or YAML file as a
 * collector would, naming each bad field.
 */
import { parseScenario, scenarioJsonSchema } from '../collector/index.js';
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { defineCommand } from './command.js';
import { readScenarioFile } from './scenario-file.js';

export const schemaCommand = defineCommand({
  spec: {
    usage: 'cni-bench scenario schema',
    summary:
      'Prints the JSON Schema (draft 2020-12) of scenario files, generated from the scenario schema the collector validates with.',
    flags: {},
    examples: ['cni-bench scenario schema > scenario.schema.json'],
    notes: ['Exit codes: 0 printed.'],
  },
  run: async (_v, _p, ctx) => {
    ctx.stdout(`${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
    return 0;
  },
});

export const checkCommand = defineCommand({
  spec: {
    usage: 'cni-bench scenario check',
    summary:
      'Validates scenario files (JSON, or YAML when they end .yaml/.yml) as the collector would, naming each bad field; prints one line per valid file.',
    flags: {},
    positionals: 'FILE...',
    examples: ['cni-bench scenario check scenario.yaml'],
    notes: ['Exit codes: 0 every file is valid, 2 a file is not (the field is named).'],
  },
  run: async (_v, positionals, ctx) => {
    if (!positionals.length)
      throw new CniBenchError(ErrorCodes.VALIDATION, 'FILE: give at least one scenario file', {
        details: { field: 'FILE' },
      });
    for (const f of positionals) {
      const s = parseScenario(await readScenarioFile(f), {});
      ctx.stdout(
        `${f}: ok (${s.measurements.length} measurements${s.serviceScale ? `, ${s.serviceScale.steps.length} sweep steps` : ''})\n`,
      );
    }
    return 0;
  },
});
