package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.CallMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;

/**
 * The interceptor's meters for one service: lb-core's {@link CallMeters} ({@link #calls}: attempts,
 * retries, the retry budget, leaked bodies and load reports, the same in every client integration),
 * and the hedging meters only this interceptor has. {@link #NOOP} (no registry) does nothing and
 * reads no clock, so a balancer without a registry pays for no metric work.
 *
 * <p>{@link #calls} listens to the balancer itself; the hedging meters go when the route is told
 * the balancer closed ({@link #closed}).
 */
class CallMetrics {
  static final CallMetrics NOOP = new CallMetrics(CallMeters.NOOP);

  /** Result tags of {@code fairway.hedges}. */
  static final String HEDGE_SENT = "sent";
  static final String HEDGE_WON = "won";
  static final String HEDGE_BUDGET_EXHAUSTED = "budget_exhausted";
  /** No hedge: no target but the first copy's had a free worker ({@link ServiceHedging#chooseHedge}). */
  static final String HEDGE_NO_CAPACITY = "no_capacity";

  /** The service's call meters, shared in kind with the other client integrations. */
  final CallMeters calls;

  CallMetrics(CallMeters calls) {
    this.calls = calls;
  }

  /** {@code result}: {@link #HEDGE_SENT}, {@link #HEDGE_WON}, {@link #HEDGE_BUDGET_EXHAUSTED} or {@link #HEDGE_NO_CAPACITY}. */
  void hedge(String result) {}

  /** The interceptor hedges calls of this service: registers the extra-load gauge. */
  void hedging(ServiceHedging hedging) {}

  /** The balancer closed: the hedging meters leave the registry. */
  void closed() {}

  /** Meters for the calls {@code lb} balances, in {@code registry} (the balancer's own). */
  static CallMetrics micrometer(MeterRegistry registry, LoadBalancer lb) {
    return new MicrometerCallMetrics(registry, lb.service(), lb.name(), CallMeters.of(lb));
  }

  /**
   * When hedging: {@code fairway.hedges{service,balancer,result}} (result {@code sent}, {@code won},
   * {@code budget_exhausted} or {@code no_capacity}, each registered on first use) and the gauge
   * {@code fairway.hedges.extra.load{service,balancer}}; {@code balancer} is {@link LoadBalancer#name()}.
   */
  static final class MicrometerCallMetrics extends CallMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final String balancer;
    private final ConcurrentMap<String, Counter> hedgesByResult = new ConcurrentHashMap<>();
    private volatile @Nullable Gauge extraLoad;
    private volatile boolean closed;

    MicrometerCallMetrics(MeterRegistry registry, String service, String balancer, CallMeters calls) {
      super(calls);
      this.registry = registry;
      this.service = service;
      this.balancer = balancer;
    }

    @Override
    void hedge(String result) {
      Counter counter = hedgesByResult.get(result);
      if (counter == null) {
        if (closed) {
          return;
        }
        counter = hedgesByResult.computeIfAbsent(result, r -> {
          Counter c = Counter.builder("fairway.hedges")
              .description("Hedged calls: second copies sent, won (their response was used), or not sent for lack of budget or of a free worker")
              .tag("service", service)
              .tag("balancer", balancer)
              .tag("result", r)
              .register(registry);
          if (closed) {
            registry.remove(c); // closed while it registered
          }
          return c;
        });
      }
      counter.increment();
    }

    @Override
    void hedging(ServiceHedging hedging) {
      extraLoad = Gauge.builder("fairway.hedges.extra.load", hedging, ServiceHedging::extraLoad)
          .description("Hedges sent per call of the service over the last 10 s (0.05 = 5% extra calls)")
          .tag("service", service)
          .tag("balancer", balancer)
          .strongReference(true)
          .register(registry);
    }

    @Override
    void closed() {
      closed = true;
      hedgesByResult.values().forEach(registry::remove);
      hedgesByResult.clear();
      Gauge gauge = extraLoad;
      if (gauge != null) {
        registry.remove(gauge);
      }
    }
  }
}
