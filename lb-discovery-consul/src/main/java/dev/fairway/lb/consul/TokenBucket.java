package dev.fairway.lb.consul;

import java.util.function.LongSupplier;

/**
 * Limits how often the watch loop may ask Consul: {@code burst} requests at once, then
 * {@code perSecond} on average. A service whose index changes every few milliseconds would otherwise
 * turn a blocking query into a busy loop.
 *
 * <p>Not thread-safe: owned by the one watch thread.
 */
final class TokenBucket {
  private final double perNano;
  private final double burst;
  private final LongSupplier ticker;
  private double tokens;
  private long lastRefill;

  TokenBucket(double perSecond, int burst, LongSupplier ticker) {
    if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
      throw new IllegalArgumentException("rate: " + perSecond + " (expected: > 0 requests per second)");
    }
    if (burst < 1) {
      throw new IllegalArgumentException("burst: " + burst + " (expected: >= 1)");
    }
    this.perNano = perSecond / 1e9;
    this.burst = burst;
    this.ticker = ticker;
    this.tokens = burst;
    this.lastRefill = ticker.getAsLong();
  }

  /**
   * Takes one token and returns how long to wait before using it: 0 if one was available. Tokens may
   * go into debt, so consecutive calls return growing waits that honour the rate.
   */
  long reserveNanos() {
    long now = ticker.getAsLong();
    tokens = Math.min(burst, tokens + (now - lastRefill) * perNano);
    lastRefill = now;
    tokens -= 1;
    return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / perNano);
  }
}
