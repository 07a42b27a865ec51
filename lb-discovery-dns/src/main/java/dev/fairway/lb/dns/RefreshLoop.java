package dev.fairway.lb.dns;

import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.TargetListPublisher;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.xbill.DNS.Name;

/**
 * The refresh cycle of one source, on its {@link Scheduler}: resolve, publish, wait, again.
 *
 * <ul>
 *   <li>After a real answer (targets, NXDOMAIN or no records) the next refresh waits the answer's
 *       lowest TTL, kept within {@code [min, max]}.
 *   <li>After a failure (SERVFAIL, REFUSED, timeout, an unreadable reply) the last good list stays and
 *       the refresh is retried after {@code min}, then twice as long each time, up to
 *       {@link #MAX_RETRY_NANOS} (and never beyond {@code max}). The first failure of a run is logged
 *       as a warning, the rest of the run at debug level; each is counted.
 *   <li>An answer in which some SRV hosts' lookups failed is published (those hosts keep their last
 *       known addresses) and the next refresh comes as after a failure if that is sooner.
 * </ul>
 *
 * <p>One state owner: every field but {@link #closed} and {@link #lastAnswerNanos} is touched only on
 * the scheduler's thread. At most one refresh is in flight and one waiting.
 */
final class RefreshLoop {
  private static final System.Logger LOG = System.getLogger(DnsTargetSource.class.getName());

  /** The longest wait between retries after failures, unless the refresh bound is shorter. */
  static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final String service;
  private final Function<Map<Name, List<InetAddress>>, CompletableFuture<Outcome>> resolve;
  private final Scheduler scheduler;
  private final LongSupplier ticker;
  private final long minNanos;
  private final long maxNanos;
  private final TargetListPublisher publisher;
  private final DiscoveryMetrics metrics;
  private final long startNanos;

  private volatile boolean closed;
  private volatile long lastAnswerNanos; // 0: none yet
  private volatile @Nullable Future<?> pending;
  private Map<Name, List<InetAddress>> knownHosts = Map.of();
  private Set<String> lastProblems = Set.of();
  private int failures;

  RefreshLoop(String service, Function<Map<Name, List<InetAddress>>, CompletableFuture<Outcome>> resolve,
      Scheduler scheduler, LongSupplier ticker, long minNanos, long maxNanos, TargetListPublisher publisher,
      DiscoveryMetrics metrics) {
    this.service = service;
    this.resolve = resolve;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.minNanos = minNanos;
    this.maxNanos = maxNanos;
    this.publisher = publisher;
    this.metrics = metrics;
    this.startNanos = ticker.getAsLong();
  }

  void start() {
    scheduler.execute(this::refresh);
  }

  /** Time since the last real answer (since the start before the first one). */
  long stalenessNanos() {
    long last = lastAnswerNanos;
    return Math.max(0, ticker.getAsLong() - (last == 0 ? startNanos : last));
  }

  /** Stops the cycle: cancels the waiting refresh; a reply still on its way is dropped. */
  void close() {
    closed = true;
    Future<?> p = pending;
    if (p != null) {
      p.cancel(false);
    }
  }

  private void refresh() {
    if (closed) {
      return;
    }
    CompletableFuture<Outcome> outcome;
    try {
      outcome = resolve.apply(knownHosts);
    } catch (RuntimeException e) {
      outcome = CompletableFuture.completedFuture(new Outcome.Failed("error", "refresh failed: " + e));
    }
    var unused = outcome.whenComplete((o, e) -> {
      if (closed) {
        return;
      }
      try {
        if (e != null || o == null) {
          failed(new Outcome.Failed("error", "refresh failed: " + e));
        } else if (o instanceof Outcome.Resolved r) {
          resolved(r);
        } else {
          failed((Outcome.Failed) o);
        }
      } catch (RuntimeException unexpected) {
        LOG.log(Level.ERROR, service + ": DNS refresh failed unexpectedly; retrying", unexpected);
        next(retryNanos(++failures));
      }
    });
  }

  private void resolved(Outcome.Resolved r) {
    lastAnswerNanos = ticker.getAsLong();
    // Each problem is counted every time; logged as a warning only when it is new since the last
    // answer, so a record that stays bad does not write a line per refresh.
    Set<String> problems = new HashSet<>();
    for (Outcome.Problem p : r.skipped()) {
      logProblem(problems, "skipped: " + p.detail());
      metrics.skipped(p.reason());
    }
    for (Outcome.Problem p : r.errors()) {
      logProblem(problems, p.detail());
      metrics.error(p.reason());
    }
    lastProblems = problems;
    if (failures > 0 && r.errors().isEmpty()) {
      LOG.log(Level.INFO, "{0}: DNS answers again after {1} failed refresh(es)", service, failures);
    }
    knownHosts = r.hosts();
    publisher.publish(r.targets(), "DNS now gives no target: " + r.emptyBecause());
    long wait = ttlNanos(r.ttlSeconds());
    if (r.errors().isEmpty()) {
      failures = 0;
    } else {
      wait = Math.min(wait, retryNanos(++failures));
    }
    next(wait);
  }

  private void logProblem(Set<String> problems, String line) {
    problems.add(line);
    LOG.log(lastProblems.contains(line) ? Level.DEBUG : Level.WARNING, "{0}: {1}", service, line);
  }

  private void failed(Outcome.Failed f) {
    failures++;
    metrics.error(f.reason());
    int kept = publisher.targets().size();
    if (failures == 1) {
      LOG.log(Level.WARNING, "{0}: {1}; keeping the last good list ({2} targets) and retrying", service,
          f.detail(), kept);
    } else {
      LOG.log(Level.DEBUG, "{0}: {1} (failure {2} in a row; keeping {3} targets)", service, f.detail(),
          failures, kept);
    }
    next(retryNanos(failures));
  }

  private void next(long delayNanos) {
    if (!closed) {
      pending = scheduler.schedule(this::refresh, delayNanos);
    }
  }

  /** The TTL as a wait, kept within the bounds. */
  long ttlNanos(long ttlSeconds) {
    long nanos = ttlSeconds >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : TimeUnit.SECONDS.toNanos(ttlSeconds);
    return Math.max(minNanos, Math.min(maxNanos, nanos));
  }

  /** The wait after the {@code n}-th failure in a row: min, 2 min, 4 min, ... up to 30 s (or max). */
  long retryNanos(int n) {
    long cap = Math.min(maxNanos, Math.max(minNanos, MAX_RETRY_NANOS));
    long wait = minNanos;
    for (int i = 1; i < n && wait < cap; i++) {
      wait *= 2;
    }
    return Math.min(wait, cap);
  }
}
