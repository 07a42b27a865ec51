package dev.fairway.lb;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Passive health: how call outcomes reported on {@link Pick} eject failing targets. Each target has
 * one Resilience4j {@code CircuitBreaker}, used as its outcome window only: when the window trips
 * (failure rate, or slow-call rate if configured) the target is ejected. The target's phase itself
 * (in service, {@link TargetState#EJECTED}, half-open) is Fairway's own state machine, not the
 * breaker's state.
 *
 * <p>{@link #defaults()}: a target is ejected after 5 consecutive failures, or when at least 50% of
 * its last 20 calls failed (once 10 calls were seen), or at once when no connection to it could be
 * made (refused, no route, connect timeout). It stays out for 10 s, doubling on each repeated
 * ejection up to 5 min; then it is half-open: at most the configuration's
 * {@code permittedNumberOfCallsInHalfOpenState} (3 here) trial calls are in flight at once, the first
 * success restores it, and a failure ejects it again for twice as long. At most 50% of the targets
 * are ejected at once.
 *
 * <p>Immutable and thread-safe; the {@code with...} methods return copies.
 */
public final class PassiveHealth {
  private static final PassiveHealth DISABLED = new PassiveHealth(null, 0, 0);
  private static final Duration LONGEST_EJECTION = Duration.ofMinutes(5);

  final @Nullable CircuitBreakerConfig config; // null when disabled
  final int consecutiveFailures; // 0 = only the breaker's own failure-rate rule
  final int maxEjectionPercent;

  private PassiveHealth(@Nullable CircuitBreakerConfig config, int consecutiveFailures, int maxEjectionPercent) {
    this.config = config;
    this.consecutiveFailures = consecutiveFailures;
    this.maxEjectionPercent = maxEjectionPercent;
  }

  /** The defaults described above. */
  public static PassiveHealth defaults() {
    CircuitBreakerConfig config =
        CircuitBreakerConfig.custom()
            // slidingWindow(size, minimumCalls, type) is missing from Resilience4j 2.3.0 (only its
            // 4-argument form, new in 2.3.0, is there), so the three setters that every supported version has
            .slidingWindowType(SlidingWindowType.COUNT_BASED)
            .slidingWindowSize(20)
            .minimumNumberOfCalls(10)
            .failureRateThreshold(50)
            .permittedNumberOfCallsInHalfOpenState(3)
            .waitIntervalFunctionInOpenState(
                IntervalFunction.ofExponentialBackoff(Duration.ofSeconds(10), 2.0, LONGEST_EJECTION))
            .build();
    return new PassiveHealth(config, 5, 50);
  }

  /** Outcomes are not tracked; no target is ever ejected. */
  public static PassiveHealth disabled() {
    return DISABLED;
  }

  /**
   * Your own breaker configuration: its failure-rate window and threshold decide ejection, and its
   * {@code waitIntervalFunctionInOpenState} (called with 1 for the first ejection, 2 for a repeated
   * one, ...) decides how long a target stays out; its {@code permittedNumberOfCallsInHalfOpenState}
   * how many trial calls a half-open target takes at once. Failed connects still eject at once; the
   * consecutive-failure rule is off unless set with {@link #withConsecutiveFailures}.
   */
  public static PassiveHealth of(CircuitBreakerConfig config) {
    if (config == null) {
      throw new IllegalArgumentException("config: null (expected: a CircuitBreakerConfig)");
    }
    return new PassiveHealth(config, 0, 50);
  }

  /** Ejects after this many failures in a row; 0 turns the rule off. */
  public PassiveHealth withConsecutiveFailures(int failures) {
    requireEnabled("consecutiveFailures");
    if (failures < 0 || failures > 1_000) {
      throw new IllegalArgumentException("consecutiveFailures: " + failures + " (expected: 0..1000)");
    }
    return new PassiveHealth(config, failures, maxEjectionPercent);
  }

  /**
   * The most targets ejected at once, as a percentage of all targets (at least one target may always
   * be ejected). An ejection beyond it is refused and the target stays in service.
   */
  public PassiveHealth withMaxEjectionPercent(int percent) {
    requireEnabled("maxEjectionPercent");
    if (percent < 0 || percent > 100) {
      throw new IllegalArgumentException("maxEjectionPercent: " + percent + " (expected: 0..100)");
    }
    return new PassiveHealth(config, consecutiveFailures, percent);
  }

  /**
   * How long a target stays out after its first ejection in a row (100 ms .. 1 h; default 10 s).
   * Each repeated ejection lasts twice as long as the one before, up to 5 min, or up to this time
   * if it is longer. On a configuration from {@link #of(CircuitBreakerConfig)} this replaces its
   * {@code waitIntervalFunctionInOpenState}.
   */
  public PassiveHealth withEjectionTime(Duration time) {
    requireEnabled("ejectionTime");
    if (time == null || time.compareTo(Duration.ofMillis(100)) < 0 || time.compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException("ejectionTime: " + time + " (expected: 100ms..1h)");
    }
    Duration longest = time.compareTo(LONGEST_EJECTION) > 0 ? time : LONGEST_EJECTION;
    CircuitBreakerConfig c = CircuitBreakerConfig.from(java.util.Objects.requireNonNull(config))
        .waitIntervalFunctionInOpenState(IntervalFunction.ofExponentialBackoff(time, 2.0, longest))
        .build();
    return new PassiveHealth(c, consecutiveFailures, maxEjectionPercent);
  }

  boolean enabled() {
    return config != null;
  }

  /** Trial calls a half-open target may have in flight at once: the configuration's, at least 1. */
  int trialPermits() {
    return config != null ? Math.max(1, config.getPermittedNumberOfCallsInHalfOpenState()) : 1;
  }

  /**
   * The size of the breaker's count-based window, or 0 for a time-based one. In a count-based window
   * that holds only successes, one more success changes nothing, so the balancer stops feeding
   * successes to a breaker whose window is all successes (saving Resilience4j's per-call work and
   * allocation) and feeds every outcome again from the next failure on. A time-based window needs
   * every call (its rates depend on call counts per second), so nothing is skipped there.
   */
  int skippableWindow() {
    return config != null && config.getSlidingWindowType() == SlidingWindowType.COUNT_BASED
        ? config.getSlidingWindowSize()
        : 0;
  }

  /**
   * The outcome window for one target: a breaker of the configured window, used only for its
   * verdict (it is never asked to permit a call; {@link TargetHealth} owns the phase). Null when
   * disabled.
   */
  io.github.resilience4j.circuitbreaker.@Nullable CircuitBreaker newWindow(String service, Target target) {
    return config == null ? null : io.github.resilience4j.circuitbreaker.CircuitBreaker.of(service + "/" + target.id(), config);
  }

  /** How long ejection number {@code ejectionNumber} (1 for the first in a row) lasts; 10 s if disabled. */
  long ejectionNanos(int ejectionNumber) {
    // Only an enabled PassiveHealth ejects, but a null check costs nothing and rules out an NPE.
    Long millis = config == null ? null : config.getWaitIntervalFunctionInOpenState().apply(Math.max(1, ejectionNumber));
    return Duration.ofMillis(millis == null ? 10_000 : millis).toNanos();
  }

  private void requireEnabled(String field) {
    if (config == null) {
      throw new IllegalArgumentException(field + ": cannot be set on PassiveHealth.disabled()");
    }
  }

  @Override
  public String toString() {
    return config == null
        ? "PassiveHealth.disabled"
        : "PassiveHealth{consecutiveFailures=" + consecutiveFailures + ", maxEjectionPercent="
            + maxEjectionPercent + ", failureRateThreshold=" + config.getFailureRateThreshold() + "%}";
  }
}
