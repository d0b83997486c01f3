/** A page request over an ordered listing. */
export interface PageOptions {
  /** Return rows strictly after this cursor (the last row's key of the previous page). */
  after?: string | null;
  limit: number;
}
