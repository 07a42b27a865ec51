package dev.fairway.lb.internal;

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
import java.util.function.Supplier;

/**
 * What a discovery source (Consul, Kubernetes, DNS) reports: one set of meter names and tag keys for
 * every source, so one dashboard shows them all and a Prometheus registry accepts several in one
 * application. {@link #NOOP} when no registry was given, so a source never checks.
 *
 * <p>Meters, all tagged {@code service}: the counters {@code fairway.discovery.updates}, {@code
 * .emptied}, {@code .errors} (tag {@code reason}), {@code .skipped} (tag {@code reason}: an entry of
 * outside data that could not become a target), {@code .throttled} (tag {@code reason}; Consul only);
 * the time gauge {@code .staleness} (base unit seconds) and the gauge {@code .targets} (base unit
 * {@code targets}). The counters with a {@code reason} are registered on first use, the others at
 * once; {@link #close()} removes them all. Reasons are short fixed words chosen by the source, never
 * outside data, so their cardinality is fixed by the code.
 *
 * <p>Not public API (see the package documentation). Thread-safe.
 */
public interface DiscoveryMetrics {
  DiscoveryMetrics NOOP = new DiscoveryMetrics() {};

  /** A changed list was published to subscribers. */
  default void updated() {}

  /** A request, reply or watch event failed; {@code reason} is a short fixed word such as {@code connect}. */
  default void error(String reason) {}

  /** An entry (an instance, endpoint, record, coordinate) could not become a target. */
  default void skipped(String reason) {}

  /** A non-empty list was replaced by an empty one. */
  default void emptied() {}

  /** The next query was held back ({@code reason} such as {@code unchanged} or {@code flapping}). */
  default void throttled(String reason) {}

  /** Unregisters the meters (the gauges hold a reference to the source). */
  default void close() {}

  /**
   * The meters of {@code service}'s source in {@code registry}. {@code staleness} reads, in {@code
   * unit}, the time since the backend last confirmed the list; {@code targets}, the current list's size.
   */
  static DiscoveryMetrics micrometer(MeterRegistry registry, String service, DoubleSupplier staleness,
      TimeUnit unit, DoubleSupplier targets) {
    return new Micrometer(registry, service, staleness, unit, targets);
  }

  /** Thread-safe: counters are cached per reason in concurrent maps. */
  final class Micrometer implements DiscoveryMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final Counter updates;
    private final Counter emptied;
    private final Map<String, Counter> errors = new ConcurrentHashMap<>();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final Map<String, Counter> throttled = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    Micrometer(MeterRegistry registry, String service, DoubleSupplier staleness, TimeUnit unit,
        DoubleSupplier targets) {
      this.registry = registry;
      this.service = service;
      this.updates = remember(Counter.builder("fairway.discovery.updates")
          .description("Target lists published after a change")
          .tag("service", service).register(registry));
      this.emptied = remember(Counter.builder("fairway.discovery.emptied")
          .description("Non-empty target lists replaced by an empty one")
          .tag("service", service).register(registry));
      remember(TimeGauge.builder("fairway.discovery.staleness", staleness, unit, DoubleSupplier::getAsDouble)
          .description("Time since the discovery backend last confirmed the list")
          .tag("service", service).strongReference(true).register(registry));
      remember(Gauge.builder("fairway.discovery.targets", targets, DoubleSupplier::getAsDouble)
          .description("Targets in the current list")
          .baseUnit("targets")
          .tag("service", service).strongReference(true).register(registry));
    }

    private <M extends Meter> M remember(M meter) {
      meters.add(meter);
      return meter;
    }

    /** The counter of {@code reason}, registered on first use from a fresh {@code builder}. */
    private Counter byReason(Map<String, Counter> counters, Supplier<Counter.Builder> builder, String reason) {
      Counter c = counters.get(reason);
      if (c == null) {
        c = counters.computeIfAbsent(reason,
            r -> remember(builder.get().tags("service", service, "reason", r).register(registry)));
      }
      return c;
    }

    @Override
    public void updated() {
      updates.increment();
    }

    @Override
    public void error(String reason) {
      byReason(errors, () -> Counter.builder("fairway.discovery.errors")
          .description("Failed requests to the discovery backend and unusable replies"), reason).increment();
    }

    @Override
    public void skipped(String reason) {
      byReason(skipped, () -> Counter.builder("fairway.discovery.skipped")
          .description("Discovered entries that could not become targets"), reason).increment();
    }

    @Override
    public void throttled(String reason) {
      byReason(throttled, () -> Counter.builder("fairway.discovery.throttled")
          .description("Queries held back: the same list under a new index, or a flapping service"), reason)
          .increment();
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
