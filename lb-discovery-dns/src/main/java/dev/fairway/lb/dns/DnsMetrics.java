package dev.fairway.lb.dns;

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
 * What a source reports. {@link #NOOP} when no registry was given, so the loop never checks.
 *
 * <p>The meters are those of the other discovery modules, so one dashboard shows every source:
 * {@code fairway.discovery.updates}, {@code .errors} (tag {@code reason}), {@code .skipped} (tag
 * {@code reason}), {@code .emptied}, the time gauge {@code .staleness} (since the last real answer)
 * and the gauge {@code .targets}; all tagged {@code service}.
 */
interface DnsMetrics {
  DnsMetrics NOOP = new DnsMetrics() {};

  /** A changed list was published to subscribers. */
  default void updated() {}

  /** A question got no answer (or one host's did not); {@code reason} is a short fixed word such as {@code servfail}. */
  default void error(String reason) {}

  /** A record could not become a target. */
  default void skipped(String reason) {}

  /** A non-empty list was replaced by an empty one. */
  default void emptied() {}

  /** Unregisters the meters (the gauges hold a reference to the source). */
  default void close() {}

  static DnsMetrics micrometer(
      MeterRegistry registry, String service, DoubleSupplier stalenessNanos, DoubleSupplier targets) {
    return new Micrometer(registry, service, stalenessNanos, targets);
  }

  /** Thread-safe: counters are cached per reason in a concurrent map. */
  final class Micrometer implements DnsMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final Counter updates;
    private final Counter emptied;
    private final Map<String, Counter> errors = new ConcurrentHashMap<>();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    Micrometer(MeterRegistry registry, String service, DoubleSupplier stalenessNanos, DoubleSupplier targets) {
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
          .description("time since the last real answer from DNS")
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
          .description("DNS questions without an answer: SERVFAIL, REFUSED, timeouts, unreadable replies")
          .tags("service", service, "reason", r).register(registry))).increment();
    }

    @Override
    public void skipped(String reason) {
      skipped.computeIfAbsent(reason, r -> remember(Counter.builder("fairway.discovery.skipped")
          .description("DNS records that could not become targets")
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
