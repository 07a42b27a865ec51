package dev.fairway.lb.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * The one owner of {@code fairway.load.reports{service,result}}: every load report a response
 * carried, by what became of it. The integrations count what they read ({@link Result#PARSED},
 * {@link Result#MALFORMED}, through {@link OutcomeRule}); the balancer counts the reports that lie
 * about its own calls ({@link Result#IMPLAUSIBLE}). One name, one
 * description, one set of tag keys, registered here only.
 *
 * <p>Why shared: the series describes a service's reports, not one reader of them, so it has no
 * {@code balancer} tag, and a registry such as Prometheus wants one set of tag keys per name. Every
 * holder of one service in one registry (its balancers, their OkHttp interceptors, the starter's
 * lifecycle) gets the same instance from {@link #acquire} and gives it back with {@link #release};
 * the last to give it back removes the counters, so a holder still counting never counts into a
 * meter the registry no longer has. Each counter is registered on its first count, so a service
 * whose targets send no reports has no such meter.
 *
 * <p>Thread-safe. Counting is lock-free once a counter is registered. Not public API (see the
 * package documentation).
 */
public final class LoadReportMeters {
  /** The meter's name. */
  public static final String NAME = "fairway.load.reports";

  /** Counts nothing: for a balancer or integration without a registry. */
  public static final LoadReportMeters NOOP = new LoadReportMeters(null, "");

  /** The {@code result} tag: what became of a report. */
  public enum Result {
    /** Read from a response and handed to the pick. */
    PARSED,
    /** A header that is not a well-formed report: ignored. */
    MALFORMED,
    /**
     * Handed to the pick, but claiming fewer calls at the target than the balancer itself has there:
     * read as the balancer's own count.
     */
    IMPLAUSIBLE;

    final String tag = name().toLowerCase(Locale.ROOT);
  }

  /** The open instances, one per registry (by identity: registries do not override equals) and service. */
  private static final ConcurrentHashMap<Key, LoadReportMeters> OPEN = new ConcurrentHashMap<>();

  private record Key(MeterRegistry registry, String service) {}

  private final @Nullable MeterRegistry registry;
  private final String service;
  private final AtomicReferenceArray<Counter> counters = new AtomicReferenceArray<>(Result.values().length);
  private int holders; // changed only inside OPEN's atomic compute for this instance's key
  private boolean removed; // guarded by this, with the registration of counters

  private LoadReportMeters(@Nullable MeterRegistry registry, String service) {
    this.registry = registry;
    this.service = service;
  }

  /**
   * The counters of {@code service} in {@code registry}, shared with every other holder of them;
   * {@link #NOOP} when {@code registry} is null. Each call must be matched by one {@link #release}.
   */
  public static LoadReportMeters acquire(@Nullable MeterRegistry registry, String service) {
    if (registry == null) {
      return NOOP;
    }
    return OPEN.compute(new Key(registry, service), (key, open) -> {
      LoadReportMeters meters = open != null ? open : new LoadReportMeters(registry, service);
      meters.holders++;
      return meters;
    });
  }

  /** Gives up one hold; the last removes the counters from the registry. Does nothing on {@link #NOOP}. */
  public void release() {
    MeterRegistry r = registry;
    if (r == null) {
      return;
    }
    OPEN.computeIfPresent(new Key(r, service), (key, open) -> {
      if (open != this) {
        return open; // this instance was released already and a new one took its key
      }
      if (--holders > 0) {
        return this;
      }
      synchronized (this) {
        removed = true;
        for (int i = 0; i < counters.length(); i++) {
          Counter c = counters.get(i);
          if (c != null) {
            r.remove(c);
          }
        }
      }
      return null;
    });
  }

  /** Counts one report with {@code result}. After the last {@link #release} it counts nothing. */
  @SuppressWarnings("EnumOrdinal") // the ordinal indexes counters, sized by Result.values(): lock-free, no map
  public void count(Result result) {
    Counter c = counters.get(result.ordinal());
    if (c == null) {
      c = register(result);
      if (c == null) {
        return;
      }
    }
    c.increment();
  }

  @SuppressWarnings("EnumOrdinal")
  private synchronized @Nullable Counter register(Result result) {
    MeterRegistry r = registry;
    if (r == null || removed) {
      return null;
    }
    Counter c = counters.get(result.ordinal());
    if (c == null) {
      c = Counter.builder("fairway.load.reports") // NAME, written out for the meters table test
          .description("Load reports (endpoint-load-metrics) read from responses, by what became of them: "
              + "parsed, malformed (ignored) or implausible (fewer calls than the balancer's own there)")
          .tag("service", service)
          .tag("result", result.tag)
          .register(r);
      counters.set(result.ordinal(), c);
    }
    return c;
  }
}
