/** A minimal structured logger (pino-compatible). Never given secrets or message bodies. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
/** Time source; tests inject a controllable one. */
export interface Clock {
  now(): Date;
}
/** Request limits. */
export interface MailroomLimits {
  /** @default 10 */
  recipientsPerMessage: number;
  /** @default 250 */
  recipientsPerBatch: number;
}
