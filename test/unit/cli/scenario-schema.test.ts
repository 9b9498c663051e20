/**
 * The published JSON Schema of scenario files (docs/scenario.schema.json) is
 * exactly what `cni-bench scenario schema` generates from the zod schema
 * (regenerate with `npm run gen:schema`), and YAML scenario files parse to
 * the same scenario as their JSON twin, with errors naming the field.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseScenarioText, readScenarioFile } from '../../../cli/scenario-file.js';
import { parseScenario, scenarioJsonSchema } from '../../../collector/index.js';
import { isCniBenchError } from '../../../core/errors.js';

const tmp = mkdtempSync(join(tmpdir(), 'cnib-scenario-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('docs/scenario.schema.json is the generated schema (npm run gen:schema)', () => {
  const published = readFileSync(new URL('../../../../docs/scenario.schema.json', import.meta.url), 'utf8');
  assert.equal(published, `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`, 'stale: run npm run gen:schema');
});

test('the schema describes the fields the collector validates, with their defaults and bounds', () => {
  const s = scenarioJsonSchema() as {
    properties: Record<string, Record<string, unknown>>;
    additionalProperties: unknown;
  };
  assert.equal(s.additionalProperties, false);
  assert.deepEqual(s.properties.rounds, { default: 3, type: 'integer', minimum: 1, maximum: 100 });
  const items = (s.properties.measurements as { items: { oneOf?: unknown[]; anyOf?: unknown[] } }).items;
  assert.equal((items.oneOf ?? items.anyOf)?.length, 4, 'throughput, http, rr and disruption');
});

test('a YAML scenario parses to the same scenario as its JSON twin', async () => {
  const yaml = join(tmp, 's.yaml');
  const json = join(tmp, 's.json');
  writeFileSync(
    yaml,
    '# comments are fine\nname: twin\ndurationSeconds: 2\nmeasurements:\n  - kind: http\n    path: service\n    mode: short-connection\n    connections: 32\n',
  );
  writeFileSync(
    json,
    JSON.stringify({
      name: 'twin',
      durationSeconds: 2,
      measurements: [{ kind: 'http', path: 'service', mode: 'short-connection', connections: 32 }],
    }),
  );
  assert.deepEqual(parseScenario(await readScenarioFile(yaml)), parseScenario(await readScenarioFile(json)));
});

test('bad YAML and bad fields are errors naming --scenario, the path and the line or field', async () => {
  const bad = join(tmp, 'bad.yml');
  writeFileSync(bad, 'name: x\nmeasurements:\n  - kind: http\n   path: pod\n');
  await assert.rejects(readScenarioFile(bad), (e: Error) => {
    assert.ok(isCniBenchError(e) && e.message.startsWith(`--scenario: '${bad}' is not valid YAML`), e.message);
    assert.match(e.message, /line \d+/);
    return true;
  });
  assert.throws(() => parseScenarioText('- a\n- b\n', 'list.yaml'), /must hold a YAML mapping/);
  assert.throws(() => parseScenarioText('a: 1\na: 2\n', 'dup.yaml'), /not valid YAML/);
  assert.throws(
    () => parseScenario(parseScenarioText('measurements:\n  - kind: http\n    path: nowhere\n', 'f.yaml')),
    /measurements\[0\]\.path/,
  );
});
