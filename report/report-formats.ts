/**
 * A run's report in each format people and programs read it in, one table
 * for the CLI (lab, run, report) and REST alike: Markdown for a terminal,
 * JSON (the model), a self-contained HTML page with charts, CSV (one line per
 * metric). Pure.
 */
import { CniBenchError, ErrorCodes } from '../core/errors.js';
import { renderReportCsv } from './csv.js';
import { renderReportHtml } from './html-report.js';
import { renderMarkdown } from './markdown.js';
import type { ReportModel } from './report.js';

export const REPORT_FORMATS = ['md', 'json', 'html', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const CONTENT_TYPES: Readonly<Record<ReportFormat, string>> = {
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** Parses `--format` / `format=`; errors name `field`. */
export function parseReportFormat(field: string, text: string | null | undefined): ReportFormat {
  if (text === null || text === undefined) return 'md';
  if (!(REPORT_FORMATS as readonly string[]).includes(text))
    throw new CniBenchError(
      ErrorCodes.VALIDATION,
      `${field}: must be one of ${REPORT_FORMATS.join(', ')}, got '${text.slice(0, 64)}'`,
      { details: { field } },
    );
  return text as ReportFormat;
}

export function renderReport(model: ReportModel, format: ReportFormat): { contentType: string; body: string } {
  const body =
    format === 'md'
      ? renderMarkdown(model)
      : format === 'html'
        ? renderReportHtml(model)
        : format === 'csv'
          ? renderReportCsv(model)
          : `${JSON.stringify(model, null, 2)}\n`;
  return { contentType: CONTENT_TYPES[format], body };
}
