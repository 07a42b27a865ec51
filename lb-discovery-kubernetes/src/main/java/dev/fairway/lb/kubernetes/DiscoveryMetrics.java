package dev.fairway.lb.kubernetes;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * What the watch reports. {@link #NOOP} when no registry was given, so the watch never checks.
 *
 * <p>The same meter names and tag keys as Consul discovery, so one dashboard serves both and a
 * Prometheus registry accepts both in one application: {@code fairway.discovery.updates},
 * {@code .errors} (tag {@code reason}), {@code .skipped} (tag {@code reason}), {@code .emptied}, the
 * time gauge {@code .staleness} and the gauge {@code .targets}; all tagged {@code service}.
 */
interface DiscoveryMetrics {
  DiscoveryMetrics NOOP = new DiscoveryMetrics() {};

  /** A changed list was published to subscribers. */
  default void updated() {}

  /** A request, reply or watch event failed; {@code reason} is a short fixed word such as {@code gone}. */
  default void error(String reason) {}

  /** A slice or endpoint could not become a target. */
  default void skipped(String reason) {}

  /** A non-empty list was replaced by an empty one. */
  default void emptied() {}

  /** Unregisters the meters (the gauges hold a reference to the source). */
  default void close() {}

  static DiscoveryMetrics micrometer(
      MeterRegistry registry, String service, DoubleSupplier stalenessNanos, DoubleSupplier targets) {
    return new MicrometerDiscoveryMetrics(registry, service, stalenessNanos, targets);
  }

  /** Thread-safe: counters are cached per reason in a concurrent map. */
  final class MicrometerDiscoveryMetrics implements DiscoveryMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final Counter updates;
    private final Counter emptied;
    private final Map<String, Counter> errors = new ConcurrentHashMap<>();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    MicrometerDiscoveryMetrics(
        MeterRegistry registry, String service, DoubleSupplier stalenessNanos, DoubleSupplier targets) {
      this.registry = registry;
      this.service = service;
      this.updates = remember(Counter.builder("fairway.discovery.updates")
          .description("target lists published after a change")
          .tag("service", service).register(registry));
      this.emptied = remember(Counter.builder("fairway.discovery.emptied")
          .description("non-empty target lists replaced by an empty one")
          .tag("service", service).register(registry));
      remember(TimeGauge.builder("fairway.discovery.staleness", stalenessNanos, TimeUnit.NANOSECONDS,
              DoubleSupplier::getAsDouble)
          .description("time since the API server last confirmed the list; 0 while a watch is open")
          .tag("service", service).strongReference(true).register(registry));
      remember(Gauge.builder("fairway.discovery.targets", targets, DoubleSupplier::getAsDouble)
          .description("targets in the current list")
          .tag("service", service).strongReference(true).register(registry));
    }

    private <M extends Meter> M remember(M meter) {
      meters.add(meter);
      return meter;
    }

    @Override
    public void updated() {
      updates.increment();
    }

    @Override
    public void error(String reason) {
      errors.computeIfAbsent(reason, r -> remember(Counter.builder("fairway.discovery.errors")
          .description("failed requests to the discovery backend and unusable replies")
          .tags("service", service, "reason", r).register(registry))).increment();
    }

    @Override
    public void skipped(String reason) {
      skipped.computeIfAbsent(reason, r -> remember(Counter.builder("fairway.discovery.skipped")
          .description("entries that could not become targets")
          .tags("service", service, "reason", r).register(registry))).increment();
    }

    @Override
    public void emptied() {
      emptied.increment();
    }

    @Override
    public void close() {
      for (Meter m : meters) {
        registry.remove(m);
      }
      meters.clear();
    }
  }
}
