/** The `mailauth` module. */
export type Mailauth = typeof import('mailauth');

let loaded: Promise<Mailauth> | undefined;

/**
 * `mailauth`, imported on first use: it pulls in an HTTP client, a schema validator and a certificate
 * parser that an engine which never checks a domain should not load.
 */
export function loadMailauth(): Promise<Mailauth> {
  loaded ??= import('mailauth').catch((error: unknown) => {
    loaded = undefined;
    throw error;
  });
  return loaded;
}
