import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isCniBenchError } from '../../../core/errors.js';
import { nodeCpuSets, onNodeCpus, parseCpuList } from '../../../lab/cpu-sets.js';

test('CPU lists as the kernel writes them', () => {
  assert.deepEqual(parseCpuList('0-1\n'), [0, 1]);
  assert.deepEqual(parseCpuList('0-3,6,8-9'), [0, 1, 2, 3, 6, 8, 9]);
  assert.deepEqual(parseCpuList('5'), [5]);
  for (const bad of ['', '0-', 'a', '0,,1', '1 2'])
    assert.throws(
      () => parseCpuList(bad),
      (e) => isCniBenchError(e, 'E_PARSE') && e.message.startsWith('Cpus_allowed_list'),
      bad,
    );
});

test('each node gets its own equal share of CPUs; fewer CPUs than nodes means no pinning', () => {
  assert.deepEqual(nodeCpuSets(2, [0, 1]), [[0], [1]]);
  assert.deepEqual(nodeCpuSets(3, [0, 1, 2, 3, 4, 5, 6, 7]), [
    [0, 1],
    [2, 3],
    [4, 5],
  ]);
  assert.deepEqual(nodeCpuSets(2, [2, 3, 6, 7]), [
    [2, 3],
    [6, 7],
  ]);
  assert.equal(nodeCpuSets(3, [0, 1]), undefined);
  assert.equal(nodeCpuSets(0, [0, 1]), undefined);
});

test('a node with its own CPUs runs its tools through taskset; a sharing node runs them as they are', () => {
  assert.deepEqual(onNodeCpus([2, 3], 'ip', ['netns', 'exec', 'n1', 'nft', '-f', '-']), [
    'taskset',
    ['--cpu-list', '2,3', 'ip', 'netns', 'exec', 'n1', 'nft', '-f', '-'],
  ]);
  assert.deepEqual(onNodeCpus(undefined, 'ip', ['link']), ['ip', ['link']]);
  assert.deepEqual(onNodeCpus([], 'ip', ['link']), ['ip', ['link']]);
});
