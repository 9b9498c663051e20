/**
 * The node's fingerprint for registration (CPU, cores, governor, hypervisor,
 * OS, memory, the pod interface's driver, speed and MTU), so a report says
 * what hardware its numbers came from. Read once per agent process in a
 * short-lived child (node-facts-main.ts) and remembered; a failure leaves the
 * facts out with a warning and is tried again at the next registration.
 */
import { fileURLToPath } from 'node:url';
import { parseError } from '../core/errors.js';
import { type Field, fields as f, readFields } from '../core/fields.js';
import type { Logger } from '../core/log.js';
import { run } from '../core/process.js';
import type { NodeFacts } from '../gen/cnibench/v1/agent.js';

const MAIN = fileURLToPath(new URL('./node-facts-main.js', import.meta.url));

const count = (): Field<number> => f.number({ int: true, min: 0, max: 2 ** 32 - 1 });
const factsShape = {
  cpuModel: f.string({ max: 256 }),
  physicalCores: count(),
  threads: count(),
  governor: f.string({ max: 64 }),
  virtualization: f.string({ max: 128 }),
  os: f.string({ max: 256 }),
  memoryBytes: f.number({ int: true, min: 0 }),
  podInterface: f.string({ max: 64 }),
  nicDriver: f.string({ max: 64 }),
  nicSpeedMbps: count(),
  mtu: count(),
  notes: f.strings({ max: 20, item: { max: 512 } }),
};

/** Pure: the child's stdout as NodeFacts; anything else is an error naming node-facts and showing the output. */
export function parseNodeFacts(stdout: string): NodeFacts {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (err) {
    throw parseError('node-facts', stdout, `not JSON: ${(err as Error).message}`);
  }
  try {
    const facts = readFields(factsShape, value, 'node facts');
    return { ...facts, notes: [...facts.notes] };
  } catch (err) {
    throw parseError('node-facts', stdout, (err as Error).message);
  }
}

/** Runs the fingerprint child (its own Node, not the agent's --jitless flags) and parses what it prints. */
export async function readNodeFacts(podIp: string, timeoutMs = 30_000): Promise<NodeFacts> {
  const r = await run(process.execPath, [MAIN, podIp], { timeoutMs, tool: 'node-facts' });
  return parseNodeFacts(r.stdout);
}

/**
 * Starts reading at once and remembers the first success; a call while the
 * child runs waits for it at most `waitMs` (registration is never held up
 * long: the facts then come with the next registration), and a call after a
 * failure tries again.
 */
export function nodeFactsOnce(
  podIp: string,
  log: Logger,
  waitMs = 10_000,
  read: (podIp: string) => Promise<NodeFacts> = readNodeFacts,
): () => Promise<NodeFacts | undefined> {
  let pending: Promise<NodeFacts | undefined> | undefined;
  let facts: NodeFacts | undefined;
  const start = (): Promise<NodeFacts | undefined> =>
    read(podIp).then(
      (f) => (facts = f),
      (err: Error) => {
        log.warn('node facts not read', { error: err.message });
        pending = undefined;
        return undefined;
      },
    );
  pending = start();
  return async () => {
    if (facts) return facts;
    pending ??= start();
    const timer = { id: undefined as ReturnType<typeof setTimeout> | undefined };
    const late = new Promise<undefined>((resolve) => {
      timer.id = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      return await Promise.race([pending, late]);
    } finally {
      clearTimeout(timer.id);
    }
  };
}
