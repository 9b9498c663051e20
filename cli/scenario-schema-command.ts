/** Dispatch entry for `cni-bench scenario schema` (cli/scenario-command.ts). */
export { schemaCommand as command } from './scenario-command.js';
