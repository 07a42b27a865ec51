package dev.fairway.lb;

/**
 * Whether this balancer is one of many clients of its targets. A balancer alone in front of its
 * targets sees every call they serve, so its own in-flight counts say where a worker is free; one of
 * a fleet sees a fraction, and the same counts would send every balancer of the fleet to the one
 * target that looks idle to each of them. The evidence is two calls in a row that were this
 * balancer's only one on their target and still waited in a queue (see {@link
 * LearnedConcurrency#record}); it holds for {@value #HOLD_FACTOR} x that target's service
 * time, at least one second, and every new piece of evidence extends it. Lock-free: one volatile
 * field, written by completions, read by picks.
 */
final class OtherClients {
  static final int HOLD_FACTOR = 64;
  static final long MIN_HOLD_NANOS = 1_000_000_000L;

  /** Ticker value until which other clients are taken to be present; meaningful once {@link #ever}. */
  private volatile long presentUntilNanos;
  private volatile boolean ever;

  /** How long evidence of other clients on a target with this service time holds. */
  static long holdNanos(double serviceNanos) {
    return Math.max(MIN_HOLD_NANOS, (long) (HOLD_FACTOR * serviceNanos));
  }

  void seen(long nowNanos, double serviceNanos) {
    long until = nowNanos + holdNanos(serviceNanos);
    if (!ever || until - presentUntilNanos > 0) {
      presentUntilNanos = until;
      ever = true;
    }
  }

  boolean present(long nowNanos) {
    return ever && nowNanos - presentUntilNanos < 0;
  }
}
