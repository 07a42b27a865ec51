package dev.fairway.lb;

import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A strategy attached to one balancer, the middle of a strategy's three lifetimes: the
 * {@link Strategy} is the stateless description a user configures; {@link BuiltinStrategy#attach}
 * makes one of these per balancer, owning the state that must outlive a snapshot (counters,
 * affinity table, wait queue); and it turns each new {@link TargetSnapshot} into a {@link Selector},
 * which chooses for that snapshot alone.
 */
abstract class AttachedStrategy {
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
   * Called when the selector chose nothing. A strategy with a capacity limit waits here for a slot
   * if a candidate is at its limit, and returns the target whose slot it took; null (the default)
   * means every candidate is excluded.
   *
   * @param published what the balancer publishes, read again after every wake-up
   */
  @Nullable TrackedTarget awaitSlot(@Nullable String key, @Nullable Set<Target> exclude,
      Supplier<PublishedSnapshot> published) throws NoTargetAvailableException {
    return null;
  }

  /** True for zone-aware routing ({@link ZoneRouting}): its selectors split calls by zone. */
  boolean splitsByZone() {
    return false;
  }

  /**
   * True for strategies that keep keys on targets ({@link Strategy#keyAffinity}): a failure then
   * drops the target's entries, which {@code fairway.affinity.invalidations} counts.
   */
  boolean keepsAffinity() {
    return false;
  }

  /** Callers waiting for a slot ({@link Strategy#concurrencyLimited}); 0 for the strategies that never wait. */
  int waiting() {
    return 0;
  }

  void close() {}
}
