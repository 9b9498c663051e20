/**
 * Errors over REST as RFC 9457 problem details (application/problem+json).
 * The status comes from toWireStatus, like gRPC's; `field` names the first bad
 * field and `errors` every one, so a client can point at the input without
 * parsing the message. `code` and `message` stay for clients that read them.
 */
import { type ErrorCode, toWireStatus } from '../../core/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The problem `type` of a code: a URN, stable and never fetched. */
export function problemType(code: string): string {
  return `urn:cni-bench:problem:${code}`;
}

export interface FieldError {
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code: ErrorCode | string;
  message: string;
  field?: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function fieldErrors(details: Record<string, unknown>): FieldError[] | undefined {
  const issues = details.issues;
  if (Array.isArray(issues)) {
    return issues
      .filter((i): i is FieldError => typeof i?.path === 'string' && typeof i?.message === 'string')
      .map((i) => ({ path: i.path, message: i.message }));
  }
  return typeof details.field === 'string' ? [{ path: details.field, message: '' }] : undefined;
}

/** A problem from its parts (routing answers: 404, 405, 401). */
export function problem(status: number, code: string, message: string, extra: Record<string, unknown> = {}): Problem {
  const errors = fieldErrors(extra);
  const field = typeof extra.field === 'string' ? extra.field : errors?.[0]?.path;
  return {
    ...extra,
    type: problemType(code),
    title: TITLES[status] ?? 'Error',
    status,
    detail: message,
    code,
    message,
    ...(field !== undefined ? { field } : {}),
    ...(errors ? { errors: errors.map((e) => (e.message ? e : { path: e.path, message })) } : {}),
  };
}

/** Any thrown error as a problem for `instance` (the request path). */
export function toProblem(err: unknown, instance: string): Problem {
  const w = toWireStatus(err);
  return { ...problem(w.http, w.code, w.message, w.details), instance };
}
