/**
 * `cni-bench lab cleanup`: removes the namespaces and processes that killed
 * labs left behind (every lab does this for the labs before it on start too).
 */
import { removeLeftovers } from '../lab/index.js';
import { defineCommand } from './command.js';

export const command = defineCommand({
  spec: {
    usage: 'cni-bench lab cleanup',
    summary:
      'Removes the network namespaces, processes and state of labs that were killed (a lab whose process still runs is left alone). Needs root.',
    flags: {},
    examples: ['cni-bench lab cleanup'],
    notes: ['Exit codes: 0 cleaned (or nothing to clean), 1 a removal failed, 2 bad flags.'],
  },
  async run(_values, _positionals, ctx) {
    const cleaned = await removeLeftovers(ctx.log);
    ctx.stdout(`removed ${cleaned.length} leftover lab(s)${cleaned.length ? `: ${cleaned.join(', ')}` : ''}\n`);
    return 0;
  },
});
