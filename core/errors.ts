/**
 * The catalogue of coded errors. Every error that crosses a module boundary is a
 * CniBenchError with a stable code, so callers (REST, gRPC, CLI, agents) branch on
 * the code, never on message text. `toWireStatus` is the one place codes map to
 * HTTP and gRPC statuses.
 */

export const ErrorCodes = {
  VALIDATION: 'E_VALIDATION',
  NOT_FOUND: 'E_NOT_FOUND',
  CONFLICT: 'E_CONFLICT',
  NO_AGENTS: 'E_NO_AGENTS',
  TOOL_UNKNOWN: 'E_TOOL_UNKNOWN',
  TOOL_MISSING: 'E_TOOL_MISSING',
  TOOL_FAILED: 'E_TOOL_FAILED',
  PARSE: 'E_PARSE',
  TIMEOUT: 'E_TIMEOUT',
  CANCELLED: 'E_CANCELLED',
  AGENT_LOST: 'E_AGENT_LOST',
  INTERRUPTED: 'E_INTERRUPTED',
  LAB: 'E_LAB',
  KUBERNETES: 'E_KUBERNETES',
  UNAUTHENTICATED: 'E_UNAUTHENTICATED',
  FORBIDDEN: 'E_FORBIDDEN',
  /** The store cannot write (disk full, a broken file): nothing new is accepted until it can. */
  STORE: 'E_STORE',
  INTERNAL: 'E_INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class CniBenchError extends Error {
  readonly code: ErrorCode;
  /** Extra machine-readable context (field path, tool name, ...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CniBenchError';
    this.code = code;
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }
}

/** One invalid field of an input; `path` is like `measurements[2].tool`. */
export interface FieldIssue {
  path: string;
  message: string;
}

export function validationError(issues: FieldIssue[], what = 'input'): CniBenchError {
  const text = issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
  return new CniBenchError(ErrorCodes.VALIDATION, `invalid ${what}: ${text}`, { details: { issues } });
}

const SAMPLE_CHARS = 200;

/**
 * A tool's output could not be understood. The message names the tool and shows
 * a sample of the output, so a parse failure is never mistaken for a zero.
 */
export function parseError(tool: string, output: string, reason: string): CniBenchError {
  const trimmed = output.trim();
  const sample = trimmed.length > SAMPLE_CHARS ? `${trimmed.slice(0, SAMPLE_CHARS)}…` : trimmed;
  return new CniBenchError(
    ErrorCodes.PARSE,
    `${tool}: cannot parse output (${reason}); output: ${JSON.stringify(sample)}`,
    {
      details: { tool, reason, sample },
    },
  );
}

export function isCniBenchError(err: unknown, code?: ErrorCode): err is CniBenchError {
  return err instanceof CniBenchError && (code === undefined || err.code === code);
}

/** Wraps anything thrown into a CniBenchError, keeping the original as `cause`. */
export function asCniBenchError(err: unknown): CniBenchError {
  if (err instanceof CniBenchError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new CniBenchError(ErrorCodes.INTERNAL, message, { cause: err });
}

// gRPC status numbers (grpc.status) kept here so core does not import grpc-js.
const GRPC = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  CANCELLED: 1,
  PERMISSION_DENIED: 7,
  UNAUTHENTICATED: 16,
} as const;

const WIRE: Record<ErrorCode, { http: number; grpc: number }> = {
  E_VALIDATION: { http: 400, grpc: GRPC.INVALID_ARGUMENT },
  E_TOOL_UNKNOWN: { http: 400, grpc: GRPC.INVALID_ARGUMENT },
  E_NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND },
  E_CONFLICT: { http: 409, grpc: GRPC.FAILED_PRECONDITION },
  E_NO_AGENTS: { http: 422, grpc: GRPC.FAILED_PRECONDITION },
  E_TOOL_MISSING: { http: 422, grpc: GRPC.FAILED_PRECONDITION },
  E_TOOL_FAILED: { http: 502, grpc: GRPC.INTERNAL },
  E_PARSE: { http: 502, grpc: GRPC.INTERNAL },
  E_TIMEOUT: { http: 504, grpc: GRPC.DEADLINE_EXCEEDED },
  E_CANCELLED: { http: 409, grpc: GRPC.CANCELLED },
  E_AGENT_LOST: { http: 503, grpc: GRPC.UNAVAILABLE },
  E_INTERRUPTED: { http: 409, grpc: GRPC.ABORTED },
  E_LAB: { http: 500, grpc: GRPC.INTERNAL },
  E_KUBERNETES: { http: 502, grpc: GRPC.UNAVAILABLE },
  E_UNAUTHENTICATED: { http: 401, grpc: GRPC.UNAUTHENTICATED },
  E_FORBIDDEN: { http: 403, grpc: GRPC.PERMISSION_DENIED },
  E_STORE: { http: 507, grpc: GRPC.UNAVAILABLE },
  E_INTERNAL: { http: 500, grpc: GRPC.INTERNAL },
};

/** The one mapping from any error to the statuses the APIs answer with. */
export function toWireStatus(err: unknown): {
  http: number;
  grpc: number;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
} {
  const e = asCniBenchError(err);
  return { ...WIRE[e.code], code: e.code, message: e.message, details: { ...e.details } };
}
