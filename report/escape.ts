/**
 * Text a user typed (run names, labels, reasons, node names, tool output) as
 * inert report content. Markdown: one line, HTML and structural Markdown
 * escaped, so a name cannot open a heading, a link or a `<script>` in any
 * renderer. CSV: RFC 4180 quoting, and a leading = + - @ made inert for
 * spreadsheets (CWE-1236).
 */

/**
 * What can change a document's structure: backslash (our own escapes), code
 * spans, link and image brackets, table pipes and headings (a list item may
 * hold one). Emphasis marks only change emphasis and stay, so names such as
 * W_TIME_WAIT read as typed.
 */
const MD_SPECIAL = /[\\`[\]|#>]/g;

/** Inline Markdown text, safe in a table cell, a heading or a list item. */
export function mdText(v: unknown): string {
  return String(v ?? '')
    .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replace(MD_SPECIAL, (c) => (c === '>' ? '&gt;' : `\\${c}`));
}

/** A CSV field (RFC 4180) that a spreadsheet will not evaluate. */
export function csvText(v: string): string {
  const inert = /^[=+\-@\t\r]/.test(v) && !/^-?\d/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/** Text or an attribute value in HTML or SVG: the five characters that can change markup, and control characters. */
export function htmlText(v: unknown): string {
  return String(v ?? '')
    .replace(/[\p{Cc}\u2028\u2029]/gu, (c) => (c === '\n' || c === '\t' ? c : ' '))
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}
