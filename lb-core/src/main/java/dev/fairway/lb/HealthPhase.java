package dev.fairway.lb;

/**
 * Where one target stands in the health state machine ({@link TargetHealth}). {@link TargetState} is
 * the public view of it: a half-open target reads as healthy (or warming), because it takes calls.
 */
enum HealthPhase {
  /** In service at its full weight. */
  HEALTHY,
  /** In service, its weight ramping up (slow start) after it joined or came back. */
  WARMING,
  /** Out of service until its ejection time ends (passive health). */
  EJECTED,
  /** Back from ejection on trial: a few calls at a time until one succeeds or one fails. */
  HALF_OPEN,
  /** Out of service because active probes failed or its source says so; used only in panic mode. */
  UNHEALTHY;

  /** True for the phases picks may go to outside panic mode. */
  boolean inService() {
    return this == HEALTHY || this == WARMING || this == HALF_OPEN;
  }
}
