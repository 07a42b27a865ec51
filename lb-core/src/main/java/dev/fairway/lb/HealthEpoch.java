package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Counts the health changes that take a target out of service, so the pick path can tell with one
 * read of a shared, read-mostly field whether the target it chose may have gone out since its
 * snapshot was built. {@link TargetHealth#apply} brackets every such change ({@link #begin}, the
 * state's compare-and-set, {@link #end}); {@link BalancerUpdater} reads {@link #mark} before the
 * snapshot reads any target's health. A pick whose snapshot's mark still equals {@link #started}
 * knows that every change to out of service began, and so finished, before the snapshot read the
 * states: the snapshot already reflects it, and the pick asks no target's health. Otherwise it asks
 * the chosen target ({@link TargetHealth#outAt}). One per balancer; lock-free.
 */
final class HealthEpoch {
  /** The mark of a snapshot built while a change was under way: never equal to {@link #started}. */
  static final long UNSETTLED = -1;
  private static final AtomicLongFieldUpdater<HealthEpoch> STARTED =
      AtomicLongFieldUpdater.newUpdater(HealthEpoch.class, "started");
  private static final AtomicLongFieldUpdater<HealthEpoch> FINISHED =
      AtomicLongFieldUpdater.newUpdater(HealthEpoch.class, "finished");

  volatile long started;
  private volatile long finished;

  void begin() {
    STARTED.incrementAndGet(this);
  }

  void end() {
    FINISHED.incrementAndGet(this);
  }

  /**
   * Read before a snapshot reads the targets' health: {@link #started} if no change was under way
   * (finished is read first, and never passes started, so then every change begun so far had
   * finished), else {@link #UNSETTLED}.
   */
  long mark() {
    long f = finished;
    long s = started;
    return s == f ? s : UNSETTLED;
  }
}
