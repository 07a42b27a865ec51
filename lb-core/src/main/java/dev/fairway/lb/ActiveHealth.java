package dev.fairway.lb;

import java.time.Duration;

/**
 * Active health: a {@link HealthProbe} run against every target on a schedule. A target that fails
 * {@code unhealthyThreshold} checks in a row becomes {@link TargetState#UNHEALTHY} and gets no picks;
 * one that then passes {@code healthyThreshold} checks in a row comes back.
 *
 * <p>Defaults: timeout 1 s, thresholds 2 and 2, jitter ±10% of the interval (so many clients do not
 * probe in lockstep). Probes run on a small pool of daemon threads named
 * {@code fairway-health-<service>}, owned by the balancer and stopped by its {@code close()}.
 *
 * <p>Immutable; the {@code with...} methods return copies.
 */
public final class ActiveHealth {
  final HealthProbe probe;
  final Duration interval;
  final Duration timeout;
  final int healthyThreshold;
  final int unhealthyThreshold;
  final double jitter;

  private ActiveHealth(
      HealthProbe probe, Duration interval, Duration timeout, int healthyThreshold, int unhealthyThreshold, double jitter) {
    this.probe = probe;
    this.interval = interval;
    this.timeout = timeout;
    this.healthyThreshold = healthyThreshold;
    this.unhealthyThreshold = unhealthyThreshold;
    this.jitter = jitter;
  }

  /**
   * Probes every target every {@code interval} (10 ms .. 1 day).
   *
   * @throws IllegalArgumentException naming the field if an argument is null or out of range
   */
  public static ActiveHealth of(HealthProbe probe, Duration interval) {
    if (probe == null) {
      throw new IllegalArgumentException("probe: null (expected: a HealthProbe)");
    }
    checkDuration("interval", interval);
    return new ActiveHealth(probe, interval, Duration.ofSeconds(1), 2, 2, 0.1);
  }

  /** How long one probe may take before it counts as failed (10 ms .. 1 day; default 1 s). */
  public ActiveHealth withTimeout(Duration timeout) {
    checkDuration("timeout", timeout);
    return new ActiveHealth(probe, interval, timeout, healthyThreshold, unhealthyThreshold, jitter);
  }

  /** Passing checks in a row that bring an unhealthy target back (1..100; default 2). */
  public ActiveHealth withHealthyThreshold(int checks) {
    checkThreshold("healthyThreshold", checks);
    return new ActiveHealth(probe, interval, timeout, checks, unhealthyThreshold, jitter);
  }

  /** Failing checks in a row that make a target unhealthy (1..100; default 2). */
  public ActiveHealth withUnhealthyThreshold(int checks) {
    checkThreshold("unhealthyThreshold", checks);
    return new ActiveHealth(probe, interval, timeout, healthyThreshold, checks, jitter);
  }

  /** Random spread of each round's start, as a fraction of the interval (0.0..0.5; default 0.1). */
  public ActiveHealth withJitter(double fraction) {
    if (!(fraction >= 0.0 && fraction <= 0.5)) {
      throw new IllegalArgumentException("jitter: " + fraction + " (expected: 0.0..0.5)");
    }
    return new ActiveHealth(probe, interval, timeout, healthyThreshold, unhealthyThreshold, fraction);
  }

  private static void checkThreshold(String field, int checks) {
    if (checks < 1 || checks > 100) {
      throw new IllegalArgumentException(field + ": " + checks + " (expected: 1..100)");
    }
  }

  private static void checkDuration(String field, Duration d) {
    if (d == null || d.compareTo(Duration.ofMillis(10)) < 0 || d.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException(field + ": " + d + " (expected: 10ms..1d)");
    }
  }

  @Override
  public String toString() {
    return "ActiveHealth{interval=" + interval + ", timeout=" + timeout + ", healthyThreshold=" + healthyThreshold
        + ", unhealthyThreshold=" + unhealthyThreshold + ", jitter=" + jitter + "}";
  }
}
