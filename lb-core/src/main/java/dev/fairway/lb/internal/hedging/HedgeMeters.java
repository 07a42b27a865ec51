package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.LoadBalancer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;

/**
 * One service's hedging meters, the same in every client integration that hedges: {@code
 * fairway.hedges{service,balancer,result}} and the gauge {@code
 * fairway.hedges.extra.load{service,balancer}}. {@link #NOOP} (no registry) does nothing, so a
 * balancer without a registry pays for no metric work. The meters go when the client's route is
 * told its balancer closed ({@link #closed}).
 */
public class HedgeMeters {
  /** Does nothing: the balancer has no meter registry. */
  public static final HedgeMeters NOOP = new HedgeMeters();

  /** Result tags of {@code fairway.hedges}. */
  public static final String HEDGE_SENT = "sent";
  public static final String HEDGE_WON = "won";
  public static final String HEDGE_BUDGET_EXHAUSTED = "budget_exhausted";
  /** No hedge: no target but the first copy's had a free worker ({@link ServiceHedging#chooseHedge}). */
  public static final String HEDGE_NO_CAPACITY = "no_capacity";

  HedgeMeters() {}

  /** {@code result}: {@link #HEDGE_SENT}, {@link #HEDGE_WON}, {@link #HEDGE_BUDGET_EXHAUSTED} or {@link #HEDGE_NO_CAPACITY}. */
  public void hedge(String result) {}

  /** The client hedges calls of this service: registers the extra-load gauge. */
  public void hedging(ServiceHedging hedging) {}

  /** The balancer closed: the hedging meters leave the registry. */
  public void closed() {}

  /** The hedging meters of the calls {@code lb} balances, in its registry; {@link #NOOP} without one. */
  public static HedgeMeters of(LoadBalancer lb) {
    return lb.meterRegistry().<HedgeMeters>map(r -> new MicrometerHedgeMeters(r, lb.service(), lb.name())).orElse(NOOP);
  }

  /**
   * {@code fairway.hedges{service,balancer,result}} (result {@code sent}, {@code won}, {@code
   * budget_exhausted} or {@code no_capacity}, each registered on first use) and the gauge {@code
   * fairway.hedges.extra.load{service,balancer}}; {@code balancer} is {@link LoadBalancer#name()}.
   */
  private static final class MicrometerHedgeMeters extends HedgeMeters {
    private final MeterRegistry registry;
    private final String service;
    private final String balancer;
    private final ConcurrentMap<String, Counter> hedgesByResult = new ConcurrentHashMap<>();
    private volatile @Nullable Gauge extraLoad;
    private volatile boolean closed;

    MicrometerHedgeMeters(MeterRegistry registry, String service, String balancer) {
      this.registry = registry;
      this.service = service;
      this.balancer = balancer;
    }

    @Override
    public void hedge(String result) {
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
    public void hedging(ServiceHedging hedging) {
      extraLoad = Gauge.builder("fairway.hedges.extra.load", hedging, ServiceHedging::extraLoad)
          .description("Hedges sent per call of the service over the last 10 s (0.05 = 5% extra calls)")
          .tag("service", service)
          .tag("balancer", balancer)
          .strongReference(true)
          .register(registry);
    }

    @Override
    public void closed() {
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
