/**
 * The JSON logger of the edge and worker processes: one object per line on stderr (the
 * supervisor's own start-up lines stay plain text there too), levels by name, ISO times.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(process_name: 'edge' | 'worker', level: string): Logger {
  return pino(
    {
      level,
      // Messages read as the plain-text lines did ("worker: polling task queue …"), so people and
      // scripts watching for them still find them.
      msgPrefix: `${process_name}: `,
      base: { process: process_name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      // Nothing logs credentials on purpose; these catch an accident.
      redact: { paths: ['authorization', '*.authorization', 'api_key', '*.api_key', 'headers', '*.headers'], censor: '[redacted]' },
    },
    // Asynchronous: lines written while a write is in flight go out together in one write (a
    // synchronous write per access-log line was 7-10% of a cached key check's CPU). Pending lines
    // are flushed synchronously when the process exits; only a kill -9 can lose the last ones.
    pino.destination({ fd: 2, sync: false }),
  );
}
