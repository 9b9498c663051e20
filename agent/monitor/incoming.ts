/**
 * Who probed this node lately: the responder records each source node, and the
 * incoming-probes gauge counts those seen within a window (two intervals), so a
 * node that nobody probes any more shows as 0 instead of keeping an old count.
 */
export class IncomingTracker {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly maxSources = 10_000) {}

  record(source: string, nowMs: number): void {
    if (!this.lastSeen.has(source) && this.lastSeen.size >= this.maxSources) return;
    this.lastSeen.set(source, nowMs);
  }

  /** Sources seen within `windowMs` before `nowMs`, sorted; older ones are forgotten. */
  sources(nowMs: number, windowMs: number): string[] {
    const out: string[] = [];
    for (const [source, at] of this.lastSeen) {
      if (nowMs - at <= windowMs) out.push(source);
      else this.lastSeen.delete(source);
    }
    return out.sort();
  }
}
