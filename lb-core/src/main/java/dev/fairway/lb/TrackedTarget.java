package dev.fairway.lb;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** Padding so that the hot counters below do not share a cache line with other objects' fields. */
abstract class TrackedTargetPadBefore {
  long p01, p02, p03, p04, p05, p06, p07, p08;
}

/** The fields every pick and completion touches, kept together on their own cache line(s). */
abstract class TrackedTargetHot extends TrackedTargetPadBefore {
  volatile int inFlight;
  /** Latency average in nanoseconds; 0 until the first sample. Racy read-modify-write by design. */
  volatile double ewmaNanos;
  /** Ticker value of the last EWMA update. */
  volatile long ewmaStampNanos;
}

abstract class TrackedTargetPadAfter extends TrackedTargetHot {
  long q01, q02, q03, q04, q05, q06, q07, q08;
}

/**
 * The balancer's mutable knowledge of one target: load, latency, health. One instance per target id,
 * kept across snapshot rebuilds while the id stays in the list, so counts and averages survive
 * membership changes. Snapshots hold references to these; all fields are safe to read without locks.
 * Health fields are written only under the balancer's rebuild lock.
 */
final class TrackedTarget extends TrackedTargetPadAfter {
  private static final AtomicIntegerFieldUpdater<TrackedTargetHot> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTargetHot.class, "inFlight");
  private static final AtomicIntegerFieldUpdater<TrackedTarget> CONSECUTIVE_FAILURES =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "consecutiveFailures");
  private static final AtomicIntegerFieldUpdater<TrackedTarget> AFFINITY_EPOCH =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "affinityEpoch");
  private static final AtomicIntegerFieldUpdater<TrackedTarget> RECORDED_SUCCESSES =
      AtomicIntegerFieldUpdater.newUpdater(TrackedTarget.class, "recordedSuccesses");

  /** The latest description of this target (weight or zone may change under the same id). */
  volatile Target target;
  /** Null when passive health is disabled. */
  final CircuitBreaker breaker;

  volatile int consecutiveFailures;
  /**
   * Successes recorded in the breaker since its last failure (or reset). Once it reaches the size of a
   * count-based window the window holds nothing but successes, and recording another one would
   * change nothing, so {@link #shouldRecordSuccess} lets the caller skip the breaker call.
   */
  volatile int recordedSuccesses;
  /** Bumped on every failure: affinity entries stamped with an older epoch are stale. */
  volatile int affinityEpoch;
  /** True while this target is in the current snapshot's pickable set. */
  volatile boolean pickable;
  /** True once this target left the list; its state is never reused. */
  volatile boolean removed;

  // Health, written under the rebuild lock.
  volatile boolean ejected;
  volatile long ejectedUntilNanos;
  int ejections; // ejections in a row without a success in between
  /** Back from ejection on trial: the next success restores it, the next failure ejects it again. */
  volatile boolean halfOpen;
  volatile boolean activeUnhealthy;
  int probeSuccesses; // consecutive, written by the probe completion under the rebuild lock
  int probeFailures;
  /** Ticker value when slow start began; {@link Long#MIN_VALUE} when not warming. */
  volatile long warmingSinceNanos = Long.MIN_VALUE;
  /** The state shown by status(), set at each rebuild. */
  volatile TargetState state = TargetState.HEALTHY;

  TrackedTarget(Target target, CircuitBreaker breaker) {
    this.target = target;
    this.breaker = breaker;
  }

  int inFlight() {
    return inFlight;
  }

  void acquire() {
    IN_FLIGHT.incrementAndGet(this);
  }

  /** Increments in-flight only if it is below {@code limit}; false if it was at or above. */
  boolean tryAcquire(int limit) {
    for (;;) {
      int current = inFlight;
      if (current >= limit) {
        return false;
      }
      if (IN_FLIGHT.compareAndSet(this, current, current + 1)) {
        return true;
      }
    }
  }

  void releaseSlot() {
    IN_FLIGHT.decrementAndGet(this);
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
    for (;;) {
      int n = recordedSuccesses;
      if (n >= windowSize) {
        return false;
      }
      if (RECORDED_SUCCESSES.compareAndSet(this, n, n + 1)) {
        return true;
      }
    }
  }

  void resetRecordedSuccesses() {
    recordedSuccesses = 0;
  }

  void invalidateAffinity() {
    AFFINITY_EPOCH.incrementAndGet(this);
  }

  /**
   * Peak-EWMA update: a sample above the average replaces it at once (so a slowdown is seen on the
   * next pick); one below pulls it down with weight {@code 1 - exp(-dt/tau)}, so the average forgets
   * at a rate set by time, not by call rate. Concurrent updates may lose one sample; never corrupt.
   */
  void recordLatency(long sampleNanos, long nowNanos, double tauNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double current = ewmaNanos;
    if (current == 0.0 || sample >= current) {
      ewmaNanos = sample;
    } else {
      double x = Math.max(0L, nowNanos - ewmaStampNanos) / tauNanos;
      // exp(-x) by its Taylor series while x is small (error below 2e-4 for x < 0.1): samples arrive
      // far more often than tau, and Math.exp would cost more than the rest of the completion.
      double w = x < 0.1 ? 1.0 - x + x * x * 0.5 - x * x * x / 6.0 : Math.exp(-x);
      ewmaNanos = current * w + sample * (1.0 - w);
    }
    ewmaStampNanos = nowNanos;
  }

  /**
   * The average as seen at {@code nowNanos}: it decays towards zero while no sample arrives, so a
   * target that was slow and then left alone is tried again. The decay is skipped for ages under
   * tau/64 (a factor above 0.984), which keeps {@code Math.exp} off the common path.
   */
  double decayedEwma(long nowNanos, double tauNanos) {
    double current = ewmaNanos;
    if (current == 0.0) {
      return 0.0; // not measured yet: nothing to decay (and no Math.exp of a huge age)
    }
    long age = nowNanos - ewmaStampNanos;
    if (age > (long) (tauNanos / 64)) {
      return current * Math.exp(-age / tauNanos);
    }
    return current;
  }

  @Override
  public String toString() {
    return target.id() + "(" + state + ", inFlight=" + inFlight + ")";
  }
}
