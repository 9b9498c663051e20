/**
 * One process of simulated agents for bench/collector-load.ts: each agent
 * registers over real gRPC (its own channel, so its own TCP connection to
 * 127.0.0.1), opens a Session and sends one dataplane sample a second
 * (jittered start), recording when each sequence number went out and when the
 * collector's cumulative ack covered it. Prints one JSON line at the end:
 * sent, acked, and every ack latency in ms (raw, for the parent to merge).
 *
 *   node collector-load-worker.js <address> <first> <count> <rate per agent> <seconds>
 */
import { credentials, Metadata } from '@grpc/grpc-js';
import {
  AgentMessage,
  AgentServiceClient,
  type CollectorMessage,
  DataplaneSample,
  RegisterRequest,
} from '../gen/cnibench/v1/agent.js';

const [address = '', first = '0', count = '1', rate = '1', seconds = '30'] = process.argv.slice(2);
const n = Number(count);
const periodMs = 1000 / Number(rate);
const endAt = Date.now() + Number(seconds) * 1000;
const latencies: number[] = [];
let sent = 0;
let acked = 0;
let errors = 0;

/** A sample the size a small node's agent sends (a few dozen chain counters). */
const SAMPLE = DataplaneSample.fromPartial({
  runId: 'load',
  samplingJobId: 'load',
  iptablesRules: 400,
  kubeServicesRules: 40,
  conntrackCount: 1200,
  conntrackMax: 262_144,
  chains: Array.from({ length: 40 }, (_, i) => ({
    chain: `KUBE-SVC-${String(i).padStart(16, 'X')}`,
    packets: i * 1000,
    bytes: i * 64_000,
  })),
});

async function agent(i: number): Promise<void> {
  const node = `load-${i}`;
  const client = new AgentServiceClient(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const reg = await new Promise<{ agentId: string } | undefined>((resolve) =>
    client.register(
      RegisterRequest.fromPartial({ nodeName: node, podIp: '127.0.0.1', instanceId: `i-${i}`, agentVersion: 'load' }),
      new Metadata(),
      { deadline: Date.now() + 60_000 },
      (e, r) => resolve(e ? undefined : r),
    ),
  );
  if (!reg) {
    errors++;
    client.close();
    return;
  }
  const stream = client.session(new Metadata());
  const pending = new Map<number, number>();
  let seq = 0;
  let ackedUpTo = 0;
  stream.on('data', (m: CollectorMessage) => {
    if (m.body?.$case !== 'ack') return;
    const now = Date.now();
    for (let s = ackedUpTo + 1; s <= m.body.value.seq; s++) {
      const t = pending.get(s);
      if (t !== undefined) {
        latencies.push(now - t);
        pending.delete(s);
        acked++;
      }
    }
    ackedUpTo = Math.max(ackedUpTo, m.body.value.seq);
  });
  stream.on('error', () => errors++);
  stream.write(
    AgentMessage.fromPartial({
      seq: 0,
      body: { $case: 'hello', value: { agentId: reg.agentId, instanceId: `i-${i}`, activeRunIds: [] } },
    }),
  );
  await new Promise((r) => setTimeout(r, Math.random() * periodMs));
  while (Date.now() < endAt) {
    seq++;
    pending.set(seq, Date.now());
    sent++;
    stream.write(
      AgentMessage.fromPartial({ seq, body: { $case: 'sample', value: { ...SAMPLE, timeMs: Date.now() } } }),
    );
    await new Promise((r) => setTimeout(r, periodMs));
  }
  // Grace for the last acks.
  const grace = Date.now() + 10_000;
  while (pending.size && Date.now() < grace) await new Promise((r) => setTimeout(r, 100));
  stream.end();
  client.close();
}

const start = Number(first);
await Promise.all(Array.from({ length: n }, (_, k) => agent(start + k)));
process.stdout.write(`${JSON.stringify({ sent, acked, errors, latencies })}\n`);
