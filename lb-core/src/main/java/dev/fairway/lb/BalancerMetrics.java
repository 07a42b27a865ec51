package dev.fairway.lb;

import dev.fairway.lb.internal.LoadReportMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Events the balancer reports. The no-op default costs nothing (a call the JIT removes); the
 * Micrometer implementation exists only when a registry was given.
 */
class BalancerMetrics {
  static final BalancerMetrics NOOP = new BalancerMetrics();

  /** Registers the meters, for {@code members} and from now on. Called once, after subscribing succeeded. */
  void start(TrackedTarget[] members) {}

  void targetAdded(TrackedTarget t) {}

  void targetRemoved(TrackedTarget t) {}

  void ejected(TrackedTarget t) {}

  void affinityInvalidated() {}

  void panicPick() {}

  /**
   * A load report from {@code t} claimed fewer calls than this balancer had there ({@link
   * ReportJudge.Verdict#IMPLAUSIBLE}): read as this balancer's own count, and counted.
   */
  void reportImplausible(TrackedTarget t) {}

  void close() {}

  /**
   * The value of the {@code target} tag under which per-target meters count {@code target}: its id
   * while it holds one of the own series, else {@link #OTHER}. The no-op answers the id (nothing is
   * registered under it).
   */
  String targetTag(Target target) {
    return target.id();
  }

  /** The {@code target} tag value of every target beyond the limit of own series. */
  static final String OTHER = "other";

  /**
   * Micrometer meters for the balancer {@code balancer} (the tag value, already unique in the
   * registry: {@link BalancerNames}) of {@code service}; at most {@code targetLimit} targets get
   * series of their own; with {@code zoneAware}, {@code fairway.zone.spill} too.
   */
  static BalancerMetrics micrometer(MeterRegistry registry, String service, String balancer, int targetLimit,
      Supplier<PublishedSnapshot> published, LongSupplier ticker, boolean zoneAware) {
    return new MicrometerMetrics(registry, service, balancer, targetLimit, published, ticker, zoneAware);
  }

  /**
   * {@code fairway.targets{service,balancer,state}}, {@code fairway.ejections{service,balancer,target}},
   * {@code fairway.affinity.invalidations{service,balancer}}, {@code fairway.panic{service,balancer}},
   * {@code fairway.inflight{service,balancer,target}}, {@code fairway.load.reports{service,result}}
   * with result {@code implausible} (reports that claimed fewer calls than this balancer had there,
   * {@link ReportJudge.Verdict#IMPLAUSIBLE}; the meter and its sharing, with the integrations that
   * count the {@code parsed} and {@code malformed} ones, belong to {@link LoadReportMeters}), and with zone-aware routing
   * {@code fairway.zone.spill{service,balancer}} (the share of calls the current snapshot sends out
   * of the local zone, 0..1; read from the published selector, so it costs the pick path nothing).
   *
   * <p>The {@code balancer} tag is the balancer's {@linkplain LoadBalancer#name() name}: stable across
   * restarts, so a dashboard's series go on; two open balancers in one registry never share it
   * ({@link BalancerNames}), so each has its own meters and closing one removes only its own.
   *
   * <p>Per-target series are bounded: the first {@code targetLimit} targets to join (counting those
   * present at start) get series tagged with their id; every later one counts into the series tagged
   * {@code target="other"} (the in-flight gauge sums over them), registered when the first target
   * is folded and kept until close. A target that leaves removes its own series and frees its slot
   * for the next target to join; targets already folded stay folded (moving one would split its
   * counts over two series). So a registry holds at most {@code targetLimit + 1} series per name,
   * whatever the churn. Nothing is registered before {@link #start}.
   */
  static final class MicrometerMetrics extends BalancerMetrics {

    private final MeterRegistry registry;
    private final String service;
    private final String balancer;
    private final int targetLimit;
    private final Supplier<PublishedSnapshot> published;
    private final LongSupplier ticker;
    private final List<Meter> shared = new ArrayList<>();
    private final Map<TrackedTarget, List<Meter>> perTarget = new ConcurrentHashMap<>();
    private final Map<TrackedTarget, Counter> ejections = new ConcurrentHashMap<>();
    /**
     * Each member's tag value, from joining (or start) until it leaves. Written by the updater only
     * ({@link #targetAdded}, {@link #targetRemoved}, {@link #start}), read by integrations from any
     * thread; {@link #ownSeries} counts the values that are ids, also written by the updater only.
     */
    private final Map<String, String> tagById = new ConcurrentHashMap<>();
    private int ownSeries;
    /** The members counted under {@code target="other"}: the in-flight gauge sums over them. */
    private final Set<TrackedTarget> folded = ConcurrentHashMap.newKeySet();
    private @Nullable Counter otherEjections; // registered with the first folded target; updater only
    // Null until start() registers them (the balancer may be counting before then).
    private volatile @Nullable Counter invalidations;
    private volatile @Nullable Counter panic;
    private volatile LoadReportMeters loadReports = LoadReportMeters.NOOP; // held from start() to close()
    private volatile boolean started;
    private boolean closed; // guarded by this, with taking the hold on loadReports
    private final boolean zoneAware;

    MicrometerMetrics(MeterRegistry registry, String service, String balancer, int targetLimit,
        Supplier<PublishedSnapshot> published, LongSupplier ticker, boolean zoneAware) {
      this.zoneAware = zoneAware;
      this.registry = registry;
      this.service = service;
      this.balancer = balancer;
      this.targetLimit = targetLimit;
      this.published = published;
      this.ticker = ticker;
    }

    @Override
    void start(TrackedTarget[] members) {
      for (TargetState state : TargetState.values()) {
        shared.add(
            Gauge.builder("fairway.targets", this, m -> m.count(state))
                .description("Targets of the service in each state")
                .baseUnit("targets")
                .tag("service", service)
                .tag("balancer", balancer)
                .tag("state", state.name().toLowerCase(Locale.ROOT))
                .register(registry));
      }
      invalidations =
          Counter.builder("fairway.affinity.invalidations")
              .description("Failures that dropped the affinity entries pointing at a target")
              .tag("service", service)
              .tag("balancer", balancer)
              .register(registry);
      panic =
          Counter.builder("fairway.panic")
              .description("Picks made in panic mode (too few healthy targets, so all were used)")
              .tag("service", service)
              .tag("balancer", balancer)
              .register(registry);
      shared.add(invalidations);
      shared.add(panic);
      if (zoneAware) {
        shared.add(
            Gauge.builder("fairway.zone.spill", this, m -> m.spill())
                .description("Share of calls sent out of the local zone by the current snapshot")
                .tag("service", service)
                .tag("balancer", balancer)
                .register(registry));
      }
      synchronized (this) {
        if (!closed) {
          loadReports = LoadReportMeters.acquire(registry, service);
        }
      }
      started = true;
      for (TrackedTarget t : members) {
        targetAdded(t);
      }
    }

    /** The share of calls the published selector sends out of the local zone. */
    private double spill() {
      Selector selector = published.get().selector;
      return selector == null ? 0.0 : 1.0 - selector.localShare();
    }

    /** Members in {@code state} as of now: a warm-up or ejection that ended reads as ended. */
    private double count(TargetState state) {
      long now = ticker.getAsLong();
      int n = 0;
      for (TrackedTarget t : published.get().snapshot.known) {
        if (t.health.stateAt(now) == state) {
          n++;
        }
      }
      return n;
    }

    @Override
    String targetTag(Target target) {
      String tag = tagById.get(target.id());
      return tag != null ? tag : OTHER; // left (or not yet joined): never a series of its own
    }

    @Override
    void targetAdded(TrackedTarget t) {
      if (!started) {
        return; // start() registers every member at once
      }
      String id = t.target.id();
      if (tagById.containsKey(id)) {
        return; // joined in the change that start() already registered
      }
      if (ownSeries >= targetLimit) {
        fold(t);
        return;
      }
      ownSeries++;
      tagById.put(id, id);
      List<Meter> meters = new ArrayList<>(2);
      meters.add(
          Gauge.builder("fairway.inflight", t, TrackedTarget::inFlight)
              .description("Calls in flight to the target")
              .baseUnit("calls")
              .tag("service", service)
              .tag("balancer", balancer)
              .tag("target", id)
              .register(registry));
      Counter ejected = ejectionsCounter(id);
      meters.add(ejected);
      ejections.put(t, ejected);
      perTarget.put(t, meters);
    }

    /** Counts {@code t} under {@code target="other"}, registering those series with the first such target. */
    private void fold(TrackedTarget t) {
      tagById.put(t.target.id(), OTHER);
      folded.add(t);
      Counter other = otherEjections;
      if (other == null) {
        shared.add(
            Gauge.builder("fairway.inflight", this, m -> m.foldedInFlight())
                .description("Calls in flight to the target")
                .baseUnit("calls")
                .tag("service", service)
                .tag("balancer", balancer)
                .tag("target", OTHER)
                .register(registry));
        other = ejectionsCounter(OTHER);
        shared.add(other);
        otherEjections = other;
      }
      ejections.put(t, other);
    }

    private Counter ejectionsCounter(String tag) {
      return Counter.builder("fairway.ejections")
          .description("Times passive health ejected the target")
          .tag("service", service)
          .tag("balancer", balancer)
          .tag("target", tag)
          .register(registry);
    }

    private double foldedInFlight() {
      int n = 0;
      for (TrackedTarget t : folded) {
        n += t.inFlight();
      }
      return n;
    }

    @Override
    void targetRemoved(TrackedTarget t) {
      ejections.remove(t);
      if (folded.remove(t)) {
        tagById.remove(t.target.id());
        return; // the "other" series stay: they count the other folded targets, now or later
      }
      List<Meter> meters = perTarget.remove(t);
      if (meters != null) {
        tagById.remove(t.target.id());
        ownSeries--;
        RuntimeException failed = null;
        for (Meter m : meters) {
          try {
            registry.remove(m);
          } catch (RuntimeException e) { // a registry listener failed: still remove the others
            failed = e;
          }
        }
        if (failed != null) {
          throw failed;
        }
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
      Counter c = invalidations;
      if (c != null) {
        c.increment();
      }
    }

    @Override
    void panicPick() {
      Counter c = panic;
      if (c != null) {
        c.increment();
      }
    }

    @Override
    void reportImplausible(TrackedTarget t) {
      loadReports.count(LoadReportMeters.Result.IMPLAUSIBLE);
    }

    @Override
    void close() {
      folded.clear();
      tagById.clear();
      for (TrackedTarget t : new ArrayList<>(perTarget.keySet())) {
        try {
          targetRemoved(t);
        } catch (RuntimeException ignored) {
          // reported by the registry's own listener; closing goes on
        }
      }
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        shared.forEach(registry::remove);
        loadReports.release();
        loadReports = LoadReportMeters.NOOP;
      }
    }
  }
}
