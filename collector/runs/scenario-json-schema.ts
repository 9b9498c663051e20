/**
 * The JSON Schema (draft 2020-12) of what a user writes in a scenario file,
 * generated from the one zod scenario schema, so editors and CI can check a
 * file before a run and the published copy (docs/scenario.schema.json) can
 * never say something the collector does not accept. Cross-field rules (the
 * superRefine checks, such as a tool's supported paths) are not expressible
 * in it; the collector still checks them and names the field.
 */
import { z } from 'zod';
import { scenarioSchema } from './scenario.js';

export const SCENARIO_SCHEMA_ID = 'urn:cni-bench:scenario';

export function scenarioJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(scenarioSchema, { io: 'input', unrepresentable: 'throw' }) as Record<
    string,
    unknown
  >;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: SCENARIO_SCHEMA_ID,
    title: 'cni-bench scenario',
    description:
      'What a run measures (POST /v1/runs, cni-bench run/lab --scenario FILE, JSON or YAML). Generated from collector/runs/scenario.ts by `npm run gen:schema`; do not edit.',
    ...rest,
  };
}
