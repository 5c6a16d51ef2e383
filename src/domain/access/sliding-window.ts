/**
 * The sliding-log rate rule: of the calls made under one key, at most `max` are accepted in any window of
 * `windowMs` (any, not only windows aligned to a clock tick, so that a burst at the end of one second and
 * another at the start of the next cannot add up to twice the limit). Only accepted calls are logged: a
 * refused call does not push the next acceptance further away.
 */

export interface SlidingWindowDecision {
  accepted: boolean;
  /** Calls accepted in the window ending now, this one included when accepted. */
  count: number;
  /** Milliseconds until the oldest call in the window leaves it, i.e. until one more call is accepted. */
  resetMs: number;
}

/**
 * Decides one call at `now` against `log`, the ascending instants (ms) of the calls accepted so far under
 * the key; `log` is updated in place (instants that left the window dropped, `now` added when accepted).
 * Instants must not go backwards; a `now` before the last logged instant is taken as that instant.
 */
export function admitCall(log: number[], now: number, windowMs: number, max: number): SlidingWindowDecision {
  const at = Math.max(now, log.at(-1) ?? now);
  let left = 0;
  while (left < log.length && log[left]! <= at - windowMs) left += 1;
  if (left > 0) log.splice(0, left);
  const accepted = log.length < max;
  if (accepted) log.push(at);
  return { accepted, count: log.length, resetMs: log.length > 0 ? log[0]! + windowMs - at : 0 };
}
