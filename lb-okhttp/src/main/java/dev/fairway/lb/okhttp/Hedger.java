package dev.fairway.lb.okhttp;

import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * An interceptor's hedging machinery: the policy, the timer that fires hedges, the threads that run
 * them, and the clock. One per interceptor, built only when hedging is configured; the timer and
 * threads are shared by all.
 *
 * <p>The first copy of a call runs on the caller's thread; only a hedge needs a thread of its own,
 * since OkHttp's {@code Call.execute()} blocks until the response headers arrive. Hedges run on a
 * pool of daemon threads (at most {@value #MAX_THREADS}, idle ones end after 30 s; a hedge that
 * finds none free is not sent) rather than on the client's dispatcher, whose per-host limit (5 by
 * default) is shared with the async calls the hedges would be waiting for. The timer ({@link
 * HedgeTimer}) is one daemon thread; arming it costs a hedgeable call one compare-and-set and no
 * allocation.
 */
final class Hedger {
  static final int MAX_THREADS = 256;

  /**
   * Fires races' hedge timers: {@link HedgeTimer#SHARED} in production, the seam tests replace to
   * fire hedges by hand.
   */
  interface Scheduler {
    /** Calls {@code race.run()} after {@code delayNanos}, unless {@link #disarm} came first. */
    void arm(HedgedAttempt race, long delayNanos);

    /** The race no longer wants its hedge (its state already says so); called at most once, after arm. */
    void disarm(HedgedAttempt race);
  }

  final HedgingPolicy policy;
  final Scheduler scheduler;
  final Executor legs;
  final LongSupplier ticker;

  Hedger(HedgingPolicy policy, Scheduler scheduler, Executor legs, LongSupplier ticker) {
    this.policy = policy;
    this.scheduler = scheduler;
    this.legs = legs;
    this.ticker = ticker;
  }

  /** With the shared timer thread and hedge pool. */
  static Hedger create(HedgingPolicy policy, LongSupplier ticker) {
    return new Hedger(policy, HedgeTimer.SHARED, Shared.POOL, ticker);
  }

  /**
   * One hedge pool for every interceptor in the JVM, made on first use: an application with many
   * clients (the lab builds dozens) then holds at most {@value #MAX_THREADS} hedge threads in all,
   * and none once it is idle. An interceptor has no close, so nothing of its own could stop them.
   */
  private static final class Shared {
    static final ThreadPoolExecutor POOL = new ThreadPoolExecutor(
        0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), daemon("fairway-hedge-"));

    private Shared() {}
  }

  // The three decisions of hedging, each made in one place only: when a call's hedge is due, where
  // it goes, and which response times the delay learns from.

  /**
   * The delay before a hedge of a call whose first copy goes to {@code first}, starting at {@code
   * nowNanos}; -1 for no hedge (the delay is not known yet). Called once per hedgeable call, on the
   * caller's thread, before the first copy is sent.
   */
  long hedgeDelayNanos(RouteHedging hedging, Target first, long nowNanos) {
    return hedging.delayNanos(nowNanos);
  }

  /**
   * The target of a hedge whose timer fired, or null to send none (a single target, or every other
   * one ejected). Called on a hedge thread, at most once per call; the pick is the hedge's from then
   * on.
   */
  @Nullable Pick pickHedge(ServiceRoute route, @Nullable String affinityKey, Target first) {
    try {
      return route.loadBalancer.pick(affinityKey, Set.of(first));
    } catch (NoTargetAvailableException e) {
      return null;
    }
  }

  /**
   * A response time of one copy sent to {@code target} (time to the headers of a usable response,
   * or the running time of a copy cancelled because the other won), for the percentile delay.
   */
  void recordLatency(RouteHedging hedging, Target target, long nanos) {
    hedging.record(nanos);
  }

  /** The hedging state of one service. */
  RouteHedging forRoute() {
    double p = policy.percentileValue();
    return new RouteHedging(Double.isNaN(p) ? null : new LatencyWindow(p, ticker.getAsLong()), policy.fixedDelayNanos(),
        new RecentCounts(ticker), new RetryBudget(policy.percentCanHedge(), policy.minHedgesPerSecond(), ticker));
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix.endsWith("-") ? prefix + count.incrementAndGet() : prefix);
      thread.setDaemon(true);
      return thread;
    };
  }

  /** One service's hedge delay, its hedge budget and the counts behind the extra-load gauge. Thread-safe. */
  static final class RouteHedging {
    final @Nullable LatencyWindow window; // null for a fixed delay
    private final long fixedDelayNanos;
    final RecentCounts counts;
    /** The hedges' own budget (the policy's share of hedgeable calls); the retry budget comes on top. */
    final RetryBudget budget;

    RouteHedging(@Nullable LatencyWindow window, long fixedDelayNanos, RecentCounts counts, RetryBudget budget) {
      this.window = window;
      this.fixedDelayNanos = fixedDelayNanos;
      this.counts = counts;
      this.budget = budget;
    }

    /** The delay before a hedge of a call starting now, or -1 for none. */
    long delayNanos(long nowNanos) {
      return window == null ? fixedDelayNanos : window.delayNanos(nowNanos);
    }

    /** A response time of one copy, for the percentile; nothing for a fixed delay. */
    void record(long nanos) {
      if (window != null) {
        window.record(nanos);
      }
    }

    /** Hedges sent per call of this service over the last 10 s (0 without calls). */
    double extraLoad() {
      return counts.extraLoad();
    }
  }
}
