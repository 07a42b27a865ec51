package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.hedging.HedgeMeters;

/**
 * The interceptor's meters for one service: lb-core's {@link CallMeters} ({@link #calls}: attempts,
 * retries, the retry budget, leaked bodies and load reports) and {@link HedgeMeters} ({@link
 * #hedges}: {@code fairway.hedges}, {@code fairway.hedges.extra.load}), both the same in every client
 * integration. {@link #NOOP} (no registry) does nothing and reads no clock, so a balancer without a
 * registry pays for no metric work.
 *
 * <p>{@link #calls} listens to the balancer itself; the hedging meters go when the route is told
 * the balancer closed.
 */
final class CallMetrics {
  static final CallMetrics NOOP = new CallMetrics(CallMeters.NOOP, HedgeMeters.NOOP);

  /** The service's call meters, shared in kind with the other client integrations. */
  final CallMeters calls;
  /** The service's hedging meters, shared in kind with the other client integrations that hedge. */
  final HedgeMeters hedges;

  CallMetrics(CallMeters calls, HedgeMeters hedges) {
    this.calls = calls;
    this.hedges = hedges;
  }

  /** Meters for the calls {@code lb} balances, in its registry; {@link #NOOP} without one. */
  static CallMetrics of(LoadBalancer lb) {
    return lb.meterRegistry().isPresent() ? new CallMetrics(CallMeters.of(lb), HedgeMeters.of(lb)) : NOOP;
  }
}
