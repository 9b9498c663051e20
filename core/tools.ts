/**
 * Tools that ship inside the agent and need no binary on the node. Shared so the
 * collector's preflight and the agent agree on what is always available.
 */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set(['http-echo']);
