/**
 * Who a service acts for: the athlete whose data it reads or writes, the
 * zone their calendar dates are in, where the writes come from, and what the
 * caller may do. Services take this and nothing of how the caller proved who
 * it is: an access token (REST and MCP), the dashboard's session, or an app's
 * webhook holding a grant all become one.
 */
export interface Actor {
  readonly userId: string;
  /** IANA zone of the user's calendar: the "date" of a day in every input and derived row. */
  readonly timeZone: string;
  /** Recorded as the source of what the actor writes: an app's client id, or `pacer-dashboard`. */
  readonly source: string;
  /** What the caller may do for the user (an app's granted scopes; every user scope for the user themself). */
  readonly scopes: readonly string[];
}
