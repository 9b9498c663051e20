/**
 * The one mapping from the lab commands' shared flags to their options
 * (cli/lab-run-options.ts): each flag lands under the option name the lab,
 * sweep and study commands read, --agent-wait in milliseconds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { labRunOptions } from '../../../cli/lab-run-options.js';

test('the shared lab flags map to the options every lab command reads', () => {
  assert.deepEqual(
    labRunOptions({
      nodes: 3,
      duration: 2.5,
      warmup: 0.5,
      json: true,
      format: 'html',
      log: 'text',
      db: '/tmp/x.db',
      'agent-wait': 45,
      'share-cpus': true,
    }),
    {
      nodes: 3,
      durationSeconds: 2.5,
      warmupSeconds: 0.5,
      json: true,
      format: 'html',
      log: 'text',
      dbPath: '/tmp/x.db',
      agentWaitMs: 45_000,
      shareCpus: true,
    },
  );
});
