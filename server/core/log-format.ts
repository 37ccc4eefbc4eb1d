import pino, { type Logger } from 'pino';

/**
 * The service's logger: readable lines on a terminal (pino-pretty), JSON lines otherwise (files,
 * journald, log shippers). SLIPWAY_LOG_FORMAT=json|pretty overrides the guess.
 */
export function logFormat(forced: 'json' | 'pretty' | undefined, isTty: boolean): 'json' | 'pretty' {
  return forced ?? (isTty ? 'pretty' : 'json');
}

export function createLogger(level: string, format: 'json' | 'pretty'): Logger {
  if (format === 'json') return pino({ level });
  return pino({
    level,
    transport: {
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: 1 },
    },
  });
}
