/**
 * Entry point of the probe responder in the node's host network namespace
 * (pod-to-host probes): the agent starts it with nsenter, as it starts
 * host-network servers, and stops it on shutdown. Reports on stderr, one JSON
 * line: `{"event":"listening","port":P}` once bound.
 */
import { parseArgs } from 'node:util';
import { ProbeResponder } from './responder.js';

const { values } = parseArgs({
  options: { port: { type: 'string' }, node: { type: 'string' }, 'idle-ms': { type: 'string', default: '300000' } },
});
const responder = new ProbeResponder({
  node: values.node ?? '',
  port: Number(values.port),
  idleTimeoutMs: Number(values['idle-ms']),
});

responder.listen().then(
  (port) => process.stderr.write(`${JSON.stringify({ tool: 'probe-responder', event: 'listening', port })}\n`),
  (err: unknown) => {
    process.stderr.write(
      `${JSON.stringify({ tool: 'probe-responder', event: 'error', message: (err as Error).message })}\n`,
    );
    process.exit(1);
  },
);
const stop = (): void => void responder.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
