/**
 * The disruption phases of a run as the report shows them: for each, the
 * event the collector fired (collector/runs/disruption-phase.ts records it in
 * the phase), the probe stream's timeline from the client's result, and the
 * summary around the event placed on the stream's own clock. Pure.
 */
import type { JobResult } from '../gen/cnibench/v1/agent.js';
import { type DisruptionSummary, summariseDisruption, type Timeline, timelineFromProto } from './disruption.js';
import type { PhaseRecord, ResultRecord } from './records.js';

/** What a disruption phase stores about its event (the collector's DisruptionRecord, as the report reads it). */
export interface DisruptionEventRecord {
  event: string;
  firedMs: number;
  doneMs: number;
  service?: { ip: string; port: number; backends: string[] };
  did?: Record<string, unknown>;
  error?: string;
}

export interface DisruptionEntry {
  phaseIndex: number;
  /** The phase's name (the measurement's label). */
  name: string;
  event: DisruptionEventRecord;
  /** How long the control plane took to carry the event out (the API write, the restart), ms. */
  eventTookMs: number;
  timeline?: Timeline;
  summary?: DisruptionSummary;
  /** Why there is no timeline or summary (no result, an event outside the stream). */
  problem?: string;
}

function timelineOf(results: readonly JobResult[]): Timeline | undefined {
  const k = results.find((r) => r.measurement?.kind?.$case === 'disruption')?.measurement?.kind;
  return k?.$case === 'disruption' ? timelineFromProto(k.value) : undefined;
}

/** One entry per phase that recorded a disruption event, in phase order. */
export function buildDisruptions(phases: readonly PhaseRecord[], results: readonly ResultRecord[]): DisruptionEntry[] {
  const out: DisruptionEntry[] = [];
  for (const p of phases) {
    const event = (p.detail as { disruption?: DisruptionEventRecord } | undefined)?.disruption;
    if (!event) continue;
    const entry: DisruptionEntry = {
      phaseIndex: p.index,
      name: p.name,
      event,
      eventTookMs: event.doneMs - event.firedMs,
    };
    let timeline: Timeline | undefined;
    try {
      timeline = timelineOf(results.filter((r) => r.phaseIndex === p.index && !r.warmup).map((r) => r.result));
    } catch (err) {
      entry.problem = (err as Error).message;
    }
    if (timeline) {
      entry.timeline = timeline;
      try {
        // Collector and agent read the same clock in the lab; in a cluster their skew (NTP: ms) shifts the mark.
        entry.summary = summariseDisruption(timeline, event.firedMs - timeline.startMs);
      } catch (err) {
        entry.problem = (err as Error).message;
      }
    } else entry.problem ??= `no probe-stream result${p.error ? `: ${p.error}` : ''}`;
    out.push(entry);
  }
  return out;
}

/** The row's headline: failed attempts of both kinds from the event to the stream's end; null without a summary. */
export function errorsAfterEvent(e: DisruptionEntry): number | null {
  return e.summary ? e.summary.kinds.reduce((a, k) => a + k.errorsAfter, 0) : null;
}
