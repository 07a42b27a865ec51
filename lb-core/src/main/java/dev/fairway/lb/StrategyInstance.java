package dev.fairway.lb;

import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

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
  abstract Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous);

  /** Called when a hold on {@code target} ends, whatever the outcome. */
  void onRelease(TrackedTarget target) {}

  /** Called after a new snapshot was published (it may have added capacity). */
  void onPublish() {}

  /**
   * Called when the selector answered {@link Selector#AT_CAPACITY}: waits for a slot and returns the
   * target whose slot it took. Only strategies whose selectors answer that override it.
   *
   * @param published what the balancer publishes, read again after every wake-up
   */
  TrackedTarget awaitSlot(@Nullable String key, @Nullable Set<Target> exclude, Supplier<PublishedSnapshot> published)
      throws NoTargetAvailableException {
    throw new IllegalStateException(getClass().getName() + " has no capacity limit to wait for");
  }

  /** True for zone-aware routing ({@link ZoneAwareInstance}): its selectors split calls by zone. */
  boolean splitsByZone() {
    return false;
  }

  /** The affinity table, for strategies that keep one; null for the others. */
  @Nullable AffinityTable affinityTable() {
    return null;
  }

  void close() {}
}
