package dev.fairway.lb;

/** What the balancer thinks of a target right now. */
public enum TargetState {
  /** Receives its full share of picks. */
  HEALTHY,
  /** Back from ejection or newly added, ramping up under slow start; receives a reduced share. */
  WARMING,
  /** Taken out by passive health (its circuit breaker is open) until its ejection time runs out. */
  EJECTED,
  /** Failing its active health checks; receives no picks (unless the balancer is in panic mode). */
  UNHEALTHY
}
