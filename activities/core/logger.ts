/**
 * The JSON logger of the edge and worker processes: one object per line on stderr (the
 * supervisor's own start-up lines stay plain text there too), levels by name, ISO times.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

type ProcessName = 'edge' | 'worker';

const options = (process_name: ProcessName, level: string) => ({
  level,
  // Messages read as the plain-text lines did ("worker: polling task queue …"), so people and
  // scripts watching for them still find them.
  msgPrefix: `${process_name}: `,
  base: { process: process_name, pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
});

// Asynchronous by default: lines written while a write is in flight go out together in one
// write (a synchronous write per access-log line was 7-10% of a cached key check's CPU).
// Buffered lines are flushed when the process exits normally; a crash or kill -9 can lose the
// last ones, so a line that precedes an exit is written with `sync`. One stream per process, so
// the access log's lines and the others never interleave.
let stderr: pino.DestinationStream | undefined;
const destination = (sync: boolean) =>
  sync ? pino.destination({ fd: 2, sync: true }) : (stderr ??= pino.destination({ fd: 2, sync: false }));

/** `sync`: for a line written just before the process exits (a failed start), which must not be lost. */
export function createLogger(process_name: ProcessName, level: string, opts: { sync?: boolean } = {}): Logger {
  return pino(
    {
      ...options(process_name, level),
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      // Nothing logs credentials on purpose; these catch an accident.
      redact: {
        paths: ['authorization', '*.authorization', 'api_key', '*.api_key', 'headers', '*.headers'],
        censor: '[redacted]',
      },
    },
    destination(opts.sync === true),
  );
}

/**
 * The edge's access log: one line per request of fields the edge itself chooses (its id, method,
 * route pattern, status, duration, organization), never a header, body or raw URL, so it skips
 * the redaction pass every other line takes (5% of a cached key check's CPU).
 */
export function createAccessLogger(level: string): Logger {
  return pino(options('edge', level), destination(false));
}
