package dev.fairway.lb;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The balancer's knowledge of one target: its load ({@link TargetLoad}, the superclass), its
 * health ({@link TargetHealth}) and the outcome window passive health decides from. One instance per
 * target id, kept across snapshot rebuilds while the id stays in the list; a target that leaves and
 * comes back gets a new instance. Snapshots hold references to these; every field is safe to read
 * without a lock.
 */
final class TrackedTarget extends TargetLoadPadAfter {
  private static final AtomicIntegerFieldUpdater<TrackedTarget> CONSECUTIVE_FAILURES =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "consecutiveFailures");
  private static final AtomicIntegerFieldUpdater<TrackedTarget> AFFINITY_EPOCH =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "affinityEpoch");
  private static final AtomicIntegerFieldUpdater<TrackedTarget> RECORDED_SUCCESSES =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "recordedSuccesses");

  /** The latest description of this target (weight or zone may change under the same id). */
  volatile Target target;
  final TargetHealth health;
  /** The outcome window (a Resilience4j breaker used for its sliding window only); null when passive health is off. */
  final @Nullable CircuitBreaker breaker;

  volatile int consecutiveFailures;
  /**
   * Successes recorded in the breaker since its last failure (or reset). Once it reaches the size of a
   * count-based window the window holds nothing but successes, and recording another one would
   * change nothing, so {@link #shouldRecordSuccess} lets the caller skip the breaker call.
   */
  volatile int recordedSuccesses;
  /** Bumped on every failure: affinity entries stamped with an older epoch are stale. */
  volatile int affinityEpoch;
  /** True while this target is in the current snapshot's pickable set. Written by the updater only. */
  volatile boolean pickable;
  /** True once this target left the list; its state is never reused. Written by the updater only. */
  volatile boolean removed;

  // Consistent-hash ring bookkeeping, written only by the updater thread while it builds a ring.
  /** The last ring build that includes this member's points. */
  long ringBuild;
  /** The ring build that computed them (older than {@link #ringBuild} when they were reused). */
  long ringPlacedIn;
  /** How many points it has. */
  int ringCount;

  TrackedTarget(Target target, TargetHealth health, @Nullable CircuitBreaker breaker) {
    this.target = target;
    this.health = health;
    this.breaker = breaker;
  }

  int failedInARow() {
    return CONSECUTIVE_FAILURES.incrementAndGet(this);
  }

  void succeeded() {
    if (consecutiveFailures != 0) {
      consecutiveFailures = 0; // write only when needed: successes are the common case
    }
  }

  /**
   * True unless the breaker's count-based window of {@code windowSize} calls is already all
   * successes. Counts the success it approves. A failure resets the count with {@link
   * #resetRecordedSuccesses()}; the compare-and-set increment cannot overwrite that reset.
   */
  boolean shouldRecordSuccess(int windowSize) {
    return incrementBelow(RECORDED_SUCCESSES, this, windowSize);
  }

  void resetRecordedSuccesses() {
    recordedSuccesses = 0;
  }

  void invalidateAffinity() {
    AFFINITY_EPOCH.incrementAndGet(this);
  }

  @Override
  public String toString() {
    return target.id() + "(" + health + ", inFlight=" + inFlight + ")";
  }
}
