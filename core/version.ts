/** The version every binary reports (agent_version in Register, /healthz, reports). */
export const VERSION = '0.1.0';

/** Node major the project is built, tested and shipped on (tests and image alike). */
export const NODE_MAJOR = 24;

/** Exits with a clear message on another Node major (node:sqlite and the test runner differ). */
export function requireSupportedNode(binary: string): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major !== NODE_MAJOR) {
    process.stderr.write(
      `${binary}: needs Node ${NODE_MAJOR}, running on ${process.version}; use the one in node_modules/.bin (npx, npm run) or the image\n`,
    );
    process.exit(2);
  }
}
