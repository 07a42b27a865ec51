package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** Padding so that the load fields below do not share a cache line with other objects' fields. */
abstract class PeakEwmaLoadPadBefore {
  long p01, p02, p03, p04, p05, p06, p07, p08;
}

/**
 * The per-target load metric: calls in flight and a peak-EWMA latency average (as Finagle's
 * {@code PeakEwma}). It measures; it does not choose: strategies (the distribution) read it to
 * score targets. It is a superclass of {@link TrackedTarget} rather than a field so that a
 * selection reads it without another pointer hop; a further metric (say, load reported by the
 * server) belongs next to these fields, and neither the strategies' sampling nor the health state
 * machine has to change for it.
 *
 * <p>Every pick and completion touches these fields, so they sit together on their own cache
 * line(s). Lock-free; the EWMA is a racy read-modify-write by design (a lost sample, never a
 * corrupt one).
 */
abstract class PeakEwmaLoad extends PeakEwmaLoadPadBefore {
  private static final AtomicIntegerFieldUpdater<PeakEwmaLoad> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(PeakEwmaLoad.class, "inFlight");

  volatile int inFlight;
  /** Latency average in nanoseconds; 0 until the first sample. */
  volatile double ewmaNanos;
  /** Ticker value of the last EWMA update. */
  volatile long ewmaStampNanos;

  int inFlight() {
    return inFlight;
  }

  void acquire() {
    IN_FLIGHT.incrementAndGet(this);
  }

  /** Increments in-flight only if it is below {@code limit}; false if it was at or above. */
  boolean tryAcquire(int limit) {
    return incrementBelow(IN_FLIGHT, this, limit);
  }

  /**
   * Increments {@code field} of {@code owner} only if it is below {@code limit}, by compare-and-set,
   * so concurrent callers never take it past the limit; false if it was at or above.
   */
  static <T> boolean incrementBelow(AtomicIntegerFieldUpdater<T> field, T owner, int limit) {
    for (;;) {
      int current = field.get(owner);
      if (current >= limit) {
        return false;
      }
      if (field.compareAndSet(owner, current, current + 1)) {
        return true;
      }
    }
  }

  void releaseSlot() {
    IN_FLIGHT.decrementAndGet(this);
  }

  /** Forgets the latency average: a target back in service is measured afresh. */
  void resetLatency() {
    ewmaNanos = 0;
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

  /** Steps of the decay table per time constant: the decay is read to within 0.4%. */
  static final int DECAY_STEPS_PER_TAU = 256;
  /** exp(-i / 256) for ages up to 16 time constants (beyond, a factor of 1e-7: as good as gone). */
  private static final double[] DECAY = new double[16 * DECAY_STEPS_PER_TAU];

  static {
    for (int i = 0; i < DECAY.length; i++) {
      DECAY[i] = Math.exp(-(double) i / DECAY_STEPS_PER_TAU);
    }
  }

  /**
   * The average as seen at {@code nowNanos}: it decays towards zero while no sample arrives, so a
   * target that was slow and then left alone is tried again. The factor {@code exp(-age/tau)} comes
   * from a table ({@code stepsPerNano} is {@link #DECAY_STEPS_PER_TAU} / tau, computed once per
   * balancer), which keeps {@code Math.exp} off the pick path: a pick scores every target, and an
   * idle balancer's averages are all old.
   */
  final double decayedEwma(long nowNanos, double stepsPerNano) {
    double current = ewmaNanos;
    if (current == 0.0) {
      return 0.0; // not measured yet: nothing to decay
    }
    long step = (long) ((nowNanos - ewmaStampNanos) * stepsPerNano);
    if (step <= 0) {
      return current;
    }
    return current * DECAY[(int) Math.min(step, DECAY.length - 1)];
  }
}

abstract class PeakEwmaLoadPadAfter extends PeakEwmaLoad {
  long q01, q02, q03, q04, q05, q06, q07, q08;
}
