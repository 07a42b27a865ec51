package dev.fairway.lb.kubernetes;

import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with full jitter: the n-th consecutive failure waits a uniformly random time in
 * {@code [0, min(max, initial * 2^n)]}, so the clients of a whole fleet that lost the API server at once
 * do not come back in lockstep (the API server's own advice, and client-go's). {@link #reset()} after a
 * success. Not thread-safe: owned by the watch's loop.
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

  /** Records one failure and returns how long to wait before the next attempt. */
  long nextDelayNanos() {
    int shift = Math.min(failures, 40);
    long cap = initialNanos << shift;
    if (cap <= 0 || cap > maxNanos || (cap >> shift) != initialNanos) {
      cap = maxNanos;
    }
    failures++;
    return (long) (cap * Math.min(Math.max(random.getAsDouble(), 0.0), 1.0));
  }

  void reset() {
    failures = 0;
  }
}
