package dev.fairway.lb.okhttp;

import dev.fairway.lb.internal.Args;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * When {@link LoadBalancingInterceptor} sends a hedge: a second copy of a call, to another target,
 * once the first has not answered within a delay (Dean and Barroso's "hedged request", Finagle's
 * backup request). The first usable response wins and the other copy is cancelled.
 *
 * <ul>
 *   <li>{@link #fixedDelay(Duration)}: hedge every call still unanswered after the delay.
 *   <li>{@link #percentile(double)}: hedge after the given percentile of the service's recent
 *       response time, so only the slowest {@code 100 - p} percent of calls get a hedge. The
 *       percentile is taken over about the last 10 seconds and refreshed every 2; until that window
 *       holds {@value #MIN_SAMPLES} responses (looked at every 200 ms until then), calls are not
 *       hedged at all: a guess at start-up could double the load of a service that is slow because
 *       it is cold. For traffic under about 10 calls a second per service use {@link
 *       #fixedDelay(Duration)}.
 * </ul>
 *
 * <p>Hedges and retries of a service draw from one budget, {@link
 * LoadBalancingInterceptor.Builder#retryBudget(double, int)}: together they add at most that share
 * of load. A hedge the budget refuses is not sent (counted as {@code
 * fairway.hedges{result=budget_exhausted}}).
 *
 * <p>Immutable and thread-safe.
 */
public final class HedgingPolicy {
  /** Responses the percentile window must hold before a percentile delay is used. */
  public static final int MIN_SAMPLES = 100;

  private final long fixedDelayNanos; // -1 for a percentile policy
  private final double percentile; // NaN for a fixed policy

  private HedgingPolicy(long fixedDelayNanos, double percentile) {
    this.fixedDelayNanos = fixedDelayNanos;
    this.percentile = percentile;
  }

  /**
   * Hedges a call that has no response after {@code delay}.
   *
   * @param delay 1 ms .. 1 hour
   * @throws IllegalArgumentException naming the value if {@code delay} is null or out of range
   */
  public static HedgingPolicy fixedDelay(Duration delay) {
    Args.requireArgument(delay != null && delay.compareTo(Duration.ofMillis(1)) >= 0
        && delay.compareTo(Duration.ofHours(1)) <= 0, "delay", delay, "1ms..1h");
    return new HedgingPolicy(delay.toNanos(), Double.NaN);
  }

  /**
   * Hedges a call that has no response after the {@code percentile} (say 95.0) of the service's
   * recent response times (time to response headers of usable responses; copies cancelled as
   * losers count with the time they had run, as Finagle counts superseded requests). At least 1 ms.
   *
   * @param percentile 50.0 .. 99.99
   * @throws IllegalArgumentException naming the value if out of range
   */
  public static HedgingPolicy percentile(double percentile) {
    Args.requireArgument(percentile >= 50.0 && percentile <= 99.99, "percentile", percentile, "50.0..99.99");
    return new HedgingPolicy(-1, percentile);
  }

  /** The fixed delay in nanoseconds, or -1 for a percentile policy. */
  long fixedDelayNanos() {
    return fixedDelayNanos;
  }

  /** The percentile, or NaN for a fixed policy. */
  double percentileValue() {
    return percentile;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof HedgingPolicy other && other.fixedDelayNanos == fixedDelayNanos
        && Double.compare(other.percentile, percentile) == 0;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(fixedDelayNanos) * 31 + Double.hashCode(percentile);
  }

  @Override
  public String toString() {
    return fixedDelayNanos >= 0
        ? "HedgingPolicy{fixedDelay=" + Duration.ofNanos(fixedDelayNanos) + "}"
        : "HedgingPolicy{percentile=" + String.format(Locale.ROOT, "%s", percentile) + "}";
  }
}
