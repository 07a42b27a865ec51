package dev.fairway.lb.consul;

import java.util.function.LongSupplier;

/**
 * Limits how often a watch may ask Consul: {@code burst} requests at once, then one per
 * {@code refillNanos}. A service whose index changes every few milliseconds would otherwise turn a
 * blocking query into a busy loop. Kept in whole nanoseconds of credit, so waits are exact.
 *
 * <p>Not thread-safe: owned by one watch, whose steps never run concurrently.
 */
final class TokenBucket {
  private final long refillNanos;
  private final long capacityNanos;
  private final LongSupplier ticker;
  private long credit;
  private long lastRefill;

  TokenBucket(long refillNanos, int burst, LongSupplier ticker) {
    if (refillNanos < 1) {
      throw new IllegalArgumentException("refillNanos: " + refillNanos + " (expected: >= 1)");
    }
    if (burst < 1) {
      throw new IllegalArgumentException("burst: " + burst + " (expected: >= 1)");
    }
    this.refillNanos = refillNanos;
    this.capacityNanos = Math.multiplyExact(refillNanos, (long) burst);
    this.ticker = ticker;
    this.credit = capacityNanos;
    this.lastRefill = ticker.getAsLong();
  }

  /** Takes one token if one is there (no debt); false, and nothing taken, otherwise. */
  boolean tryAcquire() {
    refill();
    if (credit < refillNanos) {
      return false;
    }
    credit -= refillNanos;
    return true;
  }

  /**
   * Takes one token and returns how long to wait before using it: 0 if one was available. Credit may
   * go into debt, so consecutive calls return growing waits that honour the rate.
   */
  long reserveNanos() {
    refill();
    credit -= refillNanos;
    return credit >= 0 ? 0 : -credit;
  }

  private void refill() {
    long now = ticker.getAsLong();
    long elapsed = Math.max(0, now - lastRefill);
    credit = credit + Math.min(elapsed, capacityNanos - Math.min(credit, capacityNanos));
    lastRefill = now;
  }
}
