/**
 * Named errors. Every error kernelkit throws on purpose is a `KernelkitError` with a stable
 * `code`, so callers can branch on `err.code` (or `instanceof`) rather than parse messages.
 */
export type KernelkitErrorCode =
  | 'ERR_KERNELKIT_INVALID_ARGUMENT'
  | 'ERR_KERNELKIT_UNSUPPORTED'
  | 'ERR_KERNELKIT_BACKEND_UNAVAILABLE'
  | 'ERR_KERNELKIT_DISPOSED'
  | 'ERR_KERNELKIT_ABORTED'
  | 'ERR_KERNELKIT_LIMIT_EXCEEDED'
  | 'ERR_KERNELKIT_FILE_FORMAT'
  | 'ERR_KERNELKIT_DEVICE'
  | 'ERR_KERNELKIT_WORKER';

export class KernelkitError extends Error {
  readonly code: KernelkitErrorCode;
  constructor(code: KernelkitErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A caller-supplied argument or option is wrong; `parameter` names it (e.g. `k`, `options.variant`). */
export class InvalidArgumentError extends KernelkitError {
  readonly parameter: string;
  constructor(parameter: string, reason: string, options?: ErrorOptions) {
    super('ERR_KERNELKIT_INVALID_ARGUMENT', `${parameter}: ${reason}`, options);
    this.parameter = parameter;
  }
}

/** The request is valid but this backend cannot do it (e.g. f64 on a GPU backend). */
export class UnsupportedError extends KernelkitError {
  readonly parameter: string | undefined;
  constructor(message: string, parameter?: string, options?: ErrorOptions) {
    super('ERR_KERNELKIT_UNSUPPORTED', parameter === undefined ? message : `${parameter}: ${message}`, options);
    this.parameter = parameter;
  }
}

export interface BackendFailure {
  readonly backend: string;
  readonly reason: string;
}

/** A backend could not start; `failures` lists every backend that was tried and why it failed. */
export class BackendUnavailableError extends KernelkitError {
  readonly failures: readonly BackendFailure[];
  constructor(message: string, failures: readonly BackendFailure[] = [], options?: ErrorOptions) {
    const detail = failures.map((f) => `\n  - ${f.backend}: ${f.reason}`).join('');
    super('ERR_KERNELKIT_BACKEND_UNAVAILABLE', message + detail, options);
    this.failures = failures;
  }
}

export class DisposedError extends KernelkitError {
  constructor(backend: string) {
    super('ERR_KERNELKIT_DISPOSED', `the ${backend} backend has been disposed; create a new one`);
  }
}

export class AbortError extends KernelkitError {
  constructor(reason?: unknown) {
    super('ERR_KERNELKIT_ABORTED', 'the operation was aborted', reason === undefined ? undefined : { cause: reason });
  }
}

/** A result or a resource would exceed a limit (e.g. `maxPoints`, the device's memory). */
export class LimitExceededError extends KernelkitError {
  readonly parameter: string;
  constructor(parameter: string, reason: string, options?: ErrorOptions) {
    super('ERR_KERNELKIT_LIMIT_EXCEEDED', `${parameter}: ${reason}`, options);
    this.parameter = parameter;
  }
}

/**
 * A data file is malformed; the message names the file and the line (or byte offset), and the
 * column where the parser knows it, as `file:line:column: reason` (the form editors jump to).
 */
export class FileFormatError extends KernelkitError {
  readonly file: string;
  readonly line: number | undefined;
  /** 1-based, within `line`; only given with a line. */
  readonly column: number | undefined;
  constructor(file: string, reason: string, line?: number, options?: ErrorOptions & { readonly column?: number }) {
    const column = line === undefined ? undefined : options?.column;
    const where = `${line === undefined ? '' : `:${line}`}${column === undefined ? '' : `:${column}`}`;
    super('ERR_KERNELKIT_FILE_FORMAT', `${file}${where}: ${reason}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.file = file;
    this.line = line;
    this.column = column;
  }
}

/** The GPU device was lost or rejected a command. */
export class DeviceError extends KernelkitError {
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_KERNELKIT_DEVICE', message, options);
  }
}

/** A worker thread failed; the worker's own error is the `cause`. */
export class WorkerError extends KernelkitError {
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_KERNELKIT_WORKER', message, options);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError(signal.reason);
}

/**
 * Resolves with `p`, or rejects with AbortError as soon as `signal` aborts (the work behind `p`
 * may go on; its result is dropped).
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.reject(new AbortError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** The text of anything thrown: an Error's message, else the value as a string (a rejection may carry any value). */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
