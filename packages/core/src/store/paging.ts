/** A page request over an ordered listing. */
export interface PageOptions {
  /** Return rows strictly after this cursor (the last row's key of the previous page). */
  after?: string | null;
  limit: number;
}

/** One page of a listing and the cursor of the next one (`null` on the last page). */
export interface Page<T> {
  items: T[];
  /** Pass as `after` to get the next page; `null` when there is none. */
  next: string | null;
}
