package dev.fairway.lb;

/**
 * What one step of a target's health state machine changed: the phase before and after and why.
 * Returned by {@link TargetHealth}'s transition function and handed to the {@link BalancerUpdater},
 * which logs it, counts it, tells listeners and rebuilds the snapshot. Immutable.
 */
final class HealthTransition {
  final TrackedTarget target;
  final HealthPhase from;
  final HealthPhase to;
  /** What {@link LoadBalancer#status()} showed for the target just before this step ({@link TargetHealth#shown}). */
  final TargetState shownBefore;
  final String reason;
  /** For a transition to {@link HealthPhase#EJECTED}: how long, and which ejection in a row this is. */
  final long ejectionNanos;
  final int ejections;

  HealthTransition(TrackedTarget target, HealthPhase from, HealthPhase to, TargetState shownBefore, String reason,
      long ejectionNanos, int ejections) {
    this.target = target;
    this.from = from;
    this.to = to;
    this.shownBefore = shownBefore;
    this.reason = reason;
    this.ejectionNanos = ejectionNanos;
    this.ejections = ejections;
  }

  @Override
  public String toString() {
    return target.target.id() + " " + from + " -> " + to + " (" + reason + ")";
  }
}
