/**
 * One process of simulated agents for bench/collector-load.ts: each agent
 * registers over real gRPC (its own channel, so its own TCP connection to
 * 127.0.0.1), opens a Session and produces dataplane samples for run `runId`
 * at `rate` a second (jittered start). Like the real agent's outbox it keeps
 * every sample until acknowledged, has at most 256 in flight and honours
 * write()'s flow control; a sample's ack latency runs from when it was
 * produced to when the collector's cumulative ack covered it. Prints one JSON
 * line at the end: produced, acked, stream errors, every ack latency and
 * every production-to-write delay in ms (raw, for the parent to merge), and
 * its own CPU seconds from the start of production. Forked by the parent: it reports
 * { ready } once all its agents have registered and opened their sessions, and
 * produces from the { startAt } the parent sends back (so registration, slow
 * on a loaded machine, never eats into the measured window).
 *
 *   fork(collector-load-worker.js, [<address>, <first>, <count>, <rate per agent>, <seconds>, <runId>])
 */

import { writeFileSync } from 'node:fs';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { credentials, Metadata } from '@grpc/grpc-js';
import {
  AgentMessage,
  AgentServiceClient,
  AgentServiceService,
  type CollectorMessage,
  DataplaneSample,
  RegisterRequest,
} from '../gen/cnibench/v1/agent.js';

const [address = '', first = '0', count = '1', rate = '1', seconds = '30', runId = 'load'] = process.argv.slice(2);
const n = Number(count);
const perSecond = Number(rate);
const durationMs = Number(seconds) * 1000;
const IN_FLIGHT = 256;
const latencies: number[] = [];
/** Per acknowledged sample, ms from production to its write() on the stream (the agent's own wait: in-flight cap, flow control, its event loop). */
const writeDelays: number[] = [];
let sent = 0;
let acked = 0;
let errors = 0;

/** A sample the size a small node's agent sends: a few counters and a few dozen chain counters. */
const sampleOf = (agent: string, timeMs: number): DataplaneSample =>
  DataplaneSample.fromPartial({
    runId,
    samplingJobId: `${runId}-sample-${agent}`,
    timeMs,
    iptablesRules: 400,
    kubeServicesRules: 40,
    conntrackCount: 1200,
    conntrackMax: 262_144,
  });

/** The 40 chain counters, encoded once: a repeated field's entries, appended to each sample's other fields. */
const CHAINS = DataplaneSample.encode(
  DataplaneSample.fromPartial({
    chains: Array.from({ length: 40 }, (_, i) => ({
      chain: `KUBE-SVC-${String(i).padStart(16, 'X')}`,
      packets: i * 1000,
      bytes: i * 64_000,
    })),
  }),
).finish();

/**
 * AgentMessage{seq, sample} on the wire, the bytes AgentMessage.encode would
 * give (field order aside, which decoders ignore), built with the chains
 * encoded once: the generator's CPU per sample is kept small, so on a loaded
 * machine it is the collector, not the generator, that runs out first.
 */
function sampleMessage(seq: number, agent: string, timeMs: number): Buffer {
  const head = DataplaneSample.encode(sampleOf(agent, timeMs)).finish();
  const w = new BinaryWriter();
  w.uint32(8).uint64(seq);
  w.uint32(50).uint32(head.length + CHAINS.length);
  const prefix = w.finish();
  return Buffer.concat([prefix, head, CHAINS]);
}

const SESSION = AgentServiceService.session;

async function agent(i: number, ready: () => void, started: Promise<number>): Promise<void> {
  const node = `load-${i}`;
  const client = new AgentServiceClient(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const reg = await new Promise<{ agentId: string } | undefined>((resolve) =>
    client.register(
      RegisterRequest.fromPartial({ nodeName: node, podIp: '127.0.0.1', instanceId: `i-${i}`, agentVersion: 'load' }),
      new Metadata(),
      { deadline: Date.now() + 120_000 },
      (e, r) => resolve(e ? undefined : r),
    ),
  );
  if (!reg) {
    errors++;
    ready();
    client.close();
    return;
  }
  // The Session call with pre-encoded requests (sampleMessage), the responses decoded as the real agent does.
  const stream = client.makeBidiStreamRequest(
    SESSION.path,
    (b: Buffer) => b,
    SESSION.responseDeserialize,
    new Metadata(),
  );
  /** Produced and not yet acknowledged: seq -> produced at. */
  const produced = new Map<number, number>();
  /** seq -> written to the stream at. */
  const written = new Map<number, number>();
  let seq = 0;
  let sentUpTo = 0;
  let ackedUpTo = 0;
  let blocked = false;
  const pump = (): void => {
    while (!blocked && sentUpTo < seq && sentUpTo - ackedUpTo < IN_FLIGHT) {
      sentUpTo++;
      const at = produced.get(sentUpTo);
      if (at === undefined) continue;
      written.set(sentUpTo, Date.now());
      if (!stream.write(sampleMessage(sentUpTo, node, at))) blocked = true;
    }
  };
  stream.on('drain', () => {
    blocked = false;
    pump();
  });
  stream.on('data', (m: CollectorMessage) => {
    if (m.body?.$case !== 'ack') return;
    const now = Date.now();
    for (let s = ackedUpTo + 1; s <= m.body.value.seq; s++) {
      const t = produced.get(s);
      if (t !== undefined) {
        latencies.push(now - t);
        writeDelays.push((written.get(s) ?? now) - t);
        produced.delete(s);
        written.delete(s);
        acked++;
      }
    }
    ackedUpTo = Math.max(ackedUpTo, m.body.value.seq);
    pump();
  });
  stream.on('error', () => errors++);
  stream.write(
    SESSION.requestSerialize(
      AgentMessage.fromPartial({
        seq: 0,
        body: { $case: 'hello', value: { agentId: reg.agentId, instanceId: `i-${i}`, activeRunIds: [runId] } },
      }),
    ),
  );
  ready();
  const startAt = await started;
  // Production is paced by the clock, not by the stream: a slow collector makes the backlog (and latency) grow.
  const t0 = Math.max(startAt, Date.now()) + Math.random() * (1000 / perSecond);
  const tick = Math.max(20, 1000 / perSecond);
  await new Promise((r) => setTimeout(r, Math.max(0, t0 - Date.now())));
  while (Date.now() < startAt + durationMs) {
    const due = Math.floor(((Date.now() - t0) * perSecond) / 1000) + 1;
    const now = Date.now();
    while (seq < due) {
      seq++;
      produced.set(seq, now);
      sent++;
    }
    pump();
    await new Promise((r) => setTimeout(r, tick));
  }
  // Grace for the backlog and the last acks (what is still unacknowledged after it stays in the outbox).
  const grace = Date.now() + 60_000;
  while (produced.size && Date.now() < grace) await new Promise((r) => setTimeout(r, 100));
  stream.end();
  client.close();
}

const start = Number(first);
let waiting = n;
let onStart: (t: number) => void = () => undefined;
const started = new Promise<number>((resolve) => (onStart = resolve));
// Detached, so leading a session of its own: its autogroup's nice, when the parent asks (see --worker-group-nice).
if (process.env.CNIB_LOAD_GROUP_NICE) writeFileSync('/proc/self/autogroup', process.env.CNIB_LOAD_GROUP_NICE);
// Detached from the parent's session: leave with it (its IPC channel closes when it exits or is killed).
process.on('disconnect', () => process.exit(0));
let cpuAtStart = process.cpuUsage();
process.on('message', (m: { startAt?: number }) => {
  if (typeof m.startAt !== 'number') return;
  cpuAtStart = process.cpuUsage();
  onStart(m.startAt);
});
const ready = (): void => {
  if (--waiting === 0) process.send?.({ ready: n });
};
if (n === 0) process.send?.({ ready: 0 });
await Promise.all(Array.from({ length: n }, (_, k) => agent(start + k, ready, started)));
const cpu = process.cpuUsage(cpuAtStart);
process.removeAllListeners('disconnect');
// A large result (hundreds of thousands of latencies) is still in flight when send() returns: disconnect once it is out.
process.send?.(
  { result: { sent, acked, errors, latencies, writeDelays, cpuSeconds: (cpu.user + cpu.system) / 1e6 } },
  undefined,
  {},
  () => process.disconnect?.(),
);
