/** Dispatch entry for `cni-bench scenario check` (cli/scenario-command.ts). */
export { checkCommand as command } from './scenario-command.js';
