package dev.fairway.lb;

/**
 * A strategy attached to one balancer: owns the state that must outlive a snapshot (counters,
 * affinity table, wait queue) and builds a {@link Selector} for each new snapshot.
 */
abstract class StrategyInstance {
  /**
   * A selector for {@code snapshot} (which has at least one pickable target). {@code previous} is the
   * selector of the snapshot being replaced, or null, so expensive structures that depend only on
   * membership (a hash ring) can be reused when {@code membershipVersion} did not change.
   */
  abstract Selector selectorFor(TargetSnapshot snapshot, Selector previous);

  /** Called when a hold on {@code target} ends, whatever the outcome. */
  void onRelease(TrackedTarget target) {}

  /** The affinity table, for strategies that keep one. */
  AffinityTable affinityTable() {
    return null;
  }

  void close() {}
}
