package dev.fairway.lb.consul;

import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with full jitter: the n-th consecutive failure waits a uniformly random time in
 * {@code [0, min(max, initial * 2^n)]}, so many clients that lost Consul at the same moment do not
 * reconnect in lockstep. {@link #reset()} after a success.
 *
 * <p>Not thread-safe: owned by the one watch thread.
 */
final class Backoff {
  private final long initialNanos;
  private final long maxNanos;
  private final DoubleSupplier random;
  private int failures;

  /** {@code random} returns values in {@code [0, 1)}. */
  Backoff(long initialNanos, long maxNanos, DoubleSupplier random) {
    this.initialNanos = initialNanos;
    this.maxNanos = maxNanos;
    this.random = random;
  }

  /** The cap of the next delay, without drawing it. */
  long nextCapNanos() {
    int shift = Math.min(failures, 40);
    long cap = initialNanos << shift;
    return cap <= 0 || cap > maxNanos || (cap >> shift) != initialNanos ? maxNanos : cap;
  }

  /** Records one failure and returns how long to wait before the next attempt. */
  long nextDelayNanos() {
    long cap = nextCapNanos();
    failures++;
    double r = random.getAsDouble();
    return (long) (cap * Math.min(Math.max(r, 0.0), 1.0));
  }

  int failures() {
    return failures;
  }

  void reset() {
    failures = 0;
  }
}
