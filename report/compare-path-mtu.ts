/**
 * The path MTU of each path side by side, one column per run (a comparison,
 * and the study's matrix, which is one): an overlay's narrower pod-to-pod
 * path, or a black hole one dataplane has and another does not, is what an
 * engineer turning a dataplane on wants to see next to its throughput. A run
 * that measured a path toward several targets shows the narrowest. Pure.
 */
import type { PathMtu } from '../gen/cnibench/v1/agent.js';
import { htmlText, mdText } from './escape.js';
import { pathMtusOf } from './path-mtu-render.js';
import type { ReportRow } from './report-row.js';

export interface PathMtuCell {
  /** Largest packet that got a reply; null when not measured (error says why) or the run has no such path. */
  pathMtu: number | null;
  /** The client interface's MTU, 0 when unknown. */
  interfaceMtu: number;
  blackHole: boolean;
  /** Targets this path was measured toward in the run (the narrowest is shown). */
  targets: number;
  error: string;
}

export interface PathMtuRow {
  path: string;
  /** One per run, in run order; null when the run has no such path. */
  cells: (PathMtuCell | null)[];
  /** The runs disagree on this path's MTU or black hole. */
  differs: boolean;
}

function cellOf(mtus: readonly PathMtu[]): PathMtuCell {
  const measured = mtus.filter((m) => !m.error);
  if (!measured.length)
    return {
      pathMtu: null,
      interfaceMtu: mtus[0]?.localMtu ?? 0,
      blackHole: false,
      targets: mtus.length,
      error: mtus[0]?.error ?? '',
    };
  const narrowest = measured.reduce((a, b) => (b.effectiveMtu < a.effectiveMtu ? b : a));
  return {
    pathMtu: narrowest.effectiveMtu,
    interfaceMtu: narrowest.localMtu,
    blackHole: measured.some((m) => m.blackHole),
    targets: mtus.length,
    error: '',
  };
}

/** Rows per path in order of first appearance; empty when no run measured a path MTU. */
export function comparePathMtus(runs: readonly { rows: readonly ReportRow[] }[]): PathMtuRow[] {
  const perRun = runs.map((r) => {
    const byPath = new Map<string, PathMtu[]>();
    for (const { path, mtu } of pathMtusOf(r.rows)) byPath.set(path, [...(byPath.get(path) ?? []), mtu]);
    return byPath;
  });
  const paths = [...new Set(perRun.flatMap((m) => [...m.keys()]))];
  return paths.map((path) => {
    const cells = perRun.map((m) => {
      const mtus = m.get(path);
      return mtus ? cellOf(mtus) : null;
    });
    const seen = new Set(
      cells.filter((c): c is PathMtuCell => c?.pathMtu != null).map((c) => `${c.pathMtu}/${c.blackHole}`),
    );
    return { path, cells, differs: seen.size > 1 };
  });
}

/** A cell as Markdown: its free text escaped, the black hole in bold. */
function cellText(c: PathMtuCell | null): string {
  if (!c) return '—';
  if (c.pathMtu === null) return `not measured${c.error ? `: ${mdText(c.error)}` : ''}`;
  const iface = c.interfaceMtu && c.interfaceMtu !== c.pathMtu ? ` (interface ${c.interfaceMtu})` : '';
  return `${c.blackHole ? '**black hole** above ' : ''}${c.pathMtu}${iface}${c.targets > 1 ? ` (narrowest of ${c.targets} targets)` : ''}`;
}

/** The Markdown section; nothing when no run measured a path MTU. */
export function renderPathMtuComparison(labels: readonly string[], rows: readonly PathMtuRow[]): string[] {
  if (!rows.length) return [];
  return [
    '## Path MTU per path',
    '',
    `| path | ${labels.map(mdText).join(' | ')} |`,
    `|---|${labels.map(() => '---:').join('|')}|`,
    ...rows.map((r) => `| ${mdText(r.path)}${r.differs ? ' ⚠ differs' : ''} | ${r.cells.map(cellText).join(' | ')} |`),
    '',
    "Bytes: the largest IP packet that got an echo reply with don't-fragment set, from the client's namespace (a Service path toward its backend); the interface MTU where the path is narrower. A black hole drops larger packets without an ICMP fragmentation-needed: TCP stalls on full-size segments.",
  ];
}

/** Plain text of a cell (the HTML page escapes it). */
function plainCell(c: PathMtuCell | null): string {
  if (!c) return '—';
  if (c.pathMtu === null) return `not measured${c.error ? `: ${c.error}` : ''}`;
  const iface = c.interfaceMtu && c.interfaceMtu !== c.pathMtu ? ` (interface ${c.interfaceMtu})` : '';
  return `${c.blackHole ? 'BLACK HOLE above ' : ''}${c.pathMtu}${iface}${c.targets > 1 ? ` (narrowest of ${c.targets} targets)` : ''}`;
}

/** The HTML table's rows: path, then one escaped cell per run; a black hole marked bad. */
export function pathMtuHtmlRows(rows: readonly PathMtuRow[]): string[][] {
  return rows.map((r) => [
    htmlText(`${r.path}${r.differs ? ' ⚠ differs' : ''}`),
    ...r.cells.map((c) =>
      c?.blackHole ? `<span class="bad">${htmlText(plainCell(c))}</span>` : htmlText(plainCell(c)),
    ),
  ]);
}
