package dev.fairway.lb;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Events the balancer reports. The no-op default costs nothing (a call the JIT removes); the
 * Micrometer implementation exists only when a registry was given.
 */
class BalancerMetrics {
  static final BalancerMetrics NOOP = new BalancerMetrics();

  void targetAdded(TrackedTarget t) {}

  void targetRemoved(TrackedTarget t) {}

  void ejected(TrackedTarget t) {}

  void affinityInvalidated() {}

  void panicPick() {}

  void close() {}

  static BalancerMetrics micrometer(MeterRegistry registry, String service, Supplier<TargetSnapshot> snapshot) {
    return new MicrometerMetrics(registry, service, snapshot);
  }

  /**
   * {@code fairway.targets{service,state}}, {@code fairway.ejections{service,target}},
   * {@code fairway.affinity.invalidations{service}}, {@code fairway.panic{service}},
   * {@code fairway.inflight{service,target}}. Per-target meters are removed when the target leaves,
   * so tag cardinality follows the live list.
   */
  static final class MicrometerMetrics extends BalancerMetrics {
    private final MeterRegistry registry;
    private final String service;
    private final List<Meter> shared = new ArrayList<>();
    private final Counter invalidations;
    private final Counter panic;
    private final Map<TrackedTarget, List<Meter>> perTarget = new ConcurrentHashMap<>();
    private final Map<TrackedTarget, Counter> ejections = new ConcurrentHashMap<>();

    MicrometerMetrics(MeterRegistry registry, String service, Supplier<TargetSnapshot> snapshot) {
      this.registry = registry;
      this.service = service;
      for (TargetState state : TargetState.values()) {
        shared.add(
            Gauge.builder("fairway.targets", snapshot, s -> count(s.get(), state))
                .description("Targets of the service in each state")
                .tag("service", service)
                .tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry));
      }
      invalidations =
          Counter.builder("fairway.affinity.invalidations")
              .description("Failures that dropped the affinity entries pointing at a target")
              .tag("service", service)
              .register(registry);
      panic =
          Counter.builder("fairway.panic")
              .description("Picks made in panic mode (too few healthy targets, so all were used)")
              .tag("service", service)
              .register(registry);
      shared.add(invalidations);
      shared.add(panic);
    }

    private static double count(TargetSnapshot s, TargetState state) {
      int n = 0;
      for (TrackedTarget t : s.members) {
        if (t.state == state) {
          n++;
        }
      }
      return n;
    }

    @Override
    void targetAdded(TrackedTarget t) {
      String id = t.target.id();
      List<Meter> meters = new ArrayList<>(2);
      meters.add(
          Gauge.builder("fairway.inflight", t, TrackedTarget::inFlight)
              .description("Calls in flight to the target")
              .tag("service", service)
              .tag("target", id)
              .register(registry));
      Counter ejected =
          Counter.builder("fairway.ejections")
              .description("Times passive health ejected the target")
              .tag("service", service)
              .tag("target", id)
              .register(registry);
      meters.add(ejected);
      ejections.put(t, ejected);
      perTarget.put(t, meters);
    }

    @Override
    void targetRemoved(TrackedTarget t) {
      ejections.remove(t);
      List<Meter> meters = perTarget.remove(t);
      if (meters != null) {
        meters.forEach(registry::remove);
      }
    }

    @Override
    void ejected(TrackedTarget t) {
      Counter c = ejections.get(t);
      if (c != null) {
        c.increment();
      }
    }

    @Override
    void affinityInvalidated() {
      invalidations.increment();
    }

    @Override
    void panicPick() {
      panic.increment();
    }

    @Override
    void close() {
      for (TrackedTarget t : new ArrayList<>(perTarget.keySet())) {
        targetRemoved(t);
      }
      shared.forEach(registry::remove);
    }
  }
}
