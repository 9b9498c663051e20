/** `cni-bench cluster`: what the collector detects of its cluster (what a run started now would be labelled with). */
import { type FlagValues, oneOfFlag } from '../core/flags.js';
import { mdText } from '../report/escape.js';
import { type CliContext, defineCommand } from './command.js';
import { REMOTE_NOTES, remoteFlags, withCollector } from './remote/connect.js';

const flags = {
  format: oneOfFlag<'md' | 'json'>(['md', 'json'], { help: 'text or the JSON the API returns', default: 'md' }),
  ...remoteFlags,
};

async function cluster(v: FlagValues<typeof flags>, ctx: CliContext): Promise<number> {
  const c = await withCollector(v, (client) =>
    client.json<{ serviceFrontend: string; description: Record<string, unknown> }>('GET', 'v1/cluster'),
  );
  if (v.format === 'json') {
    ctx.stdout(`${JSON.stringify(c, null, 2)}\n`);
    return 0;
  }
  const lines = [`Service frontend: ${mdText(c.serviceFrontend)}`];
  for (const [k, val] of Object.entries(c.description ?? {}))
    lines.push(
      `${k}: ${Array.isArray(val) ? val.map(mdText).join('; ') : mdText(typeof val === 'object' ? JSON.stringify(val) : val)}`,
    );
  ctx.stdout(`${lines.join('\n')}\n`);
  return 0;
}

export const command = defineCommand({
  spec: {
    usage: 'cni-bench cluster',
    summary:
      'What the collector detects of its cluster now (Kubernetes version, CNI and mode, kube-proxy mode, nodes), before any run.',
    flags,
    examples: [
      'cni-bench cluster --kubeconfig ~/.kube/config --release cni-bench-agent --namespace cni-bench',
      'cni-bench cluster --collector http://127.0.0.1:8080 --token-file ./token',
    ],
    notes: ['Exit codes: 0 printed, 1 the collector could not be reached or refused, 2 bad flags.', ...REMOTE_NOTES],
  },
  run: (values, _p, ctx) => cluster(values, ctx),
});
