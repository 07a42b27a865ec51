package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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

    /**
     * Calls {@link HeldLosers#expire} on {@code losers} on every tick until nothing is held, so a
     * hold ends on time though no call comes; the timer then clears {@link HeldLosers#watched}.
     * Called when {@code losers} holds a copy and is not watched. A scheduler without ticks (tests
     * that fire hedges by hand) does nothing: holds then end when calls come.
     */
    default void watch(HeldLosers losers) {}
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
    return hedging.delayNanos(first, nowNanos); // the percentile of the first copy's own target
  }

  /**
   * The target of a hedge whose timer fired, after the first copy to {@code first} has run {@code
   * elapsedNanos}, or null to send none: a single target, every other one ejected, or no other one
   * where a hedge is likely to pay (counted as {@code fairway.hedges{result=no_capacity}}). Called
   * on a hedge thread, at most once per call; the pick is the hedge's from then on.
   *
   * <p>A target known to have a free worker ({@link LoadBalancer#pickWithFreeWorker}) may take the
   * hedge. One known to be busy, or about which nothing tells (a fleet without load reports), may
   * take it only if the hedge is likely to answer first although it waits there: the target's
   * median response time (as this client sees it, queueing included) is at most half of {@code
   * elapsedNanos}, and at most half of the time by which the first target's responses slower than
   * the delay overran it, on average ({@link LatencyWindow#tailWaitNanos}; at saturation a tail of
   * mere queueing overruns by about one median, a long tail by many). So a call stuck behind a
   * rare slow response (a pause, a noisy neighbour: a long tail) is hedged into a short queue, while
   * at saturation with a tail of mere queueing, where a hedge would only displace another call and
   * come back no sooner, hedging turns itself down. A target with too few responses of its own is
   * judged by the service's median. With a fixed delay no response times are kept, and while no
   * response was ever slower than the delay nothing tells what waiting costs: then any target not
   * known to be busy may take the hedge.
   */
  @Nullable Pick pickHedge(ServiceRoute route, @Nullable String affinityKey, Target first, long elapsedNanos) {
    try {
      RouteHedging hedging = route.hedging;
      long firstTailWait = hedging == null ? -1 : hedging.tailWaitNanos(first);
      Pick pick;
      if (hedging == null || firstTailWait < 0) { // a fixed delay: no response times to judge by
        pick = route.loadBalancer.pickWithFreeWorker(affinityKey, Set.of(first));
      } else {
        pick = route.loadBalancer.pickWithFreeWorker(affinityKey, Set.of(first), (target, knownBusy) -> {
          long median = hedging.medianNanos(target);
          if (median < 0) { // too few responses to judge by: as with a fixed delay
            return !knownBusy;
          }
          return 2 * median <= firstTailWait && 2 * median <= elapsedNanos;
        });
      }
      if (pick == null) {
        route.metrics.hedge(CallMetrics.HEDGE_NO_CAPACITY);
      }
      return pick;
    } catch (NoTargetAvailableException e) {
      return null;
    }
  }

  /**
   * A response time of one copy sent to {@code target} (time to the headers of a usable response,
   * or the running time of a copy cancelled because the other won), for the percentile delay.
   */
  void recordLatency(RouteHedging hedging, Target target, long nanos) {
    hedging.record(target, nanos);
  }

  /** The hedging state of one service. */
  RouteHedging forRoute() {
    double p = policy.percentileValue();
    return new RouteHedging(Double.isNaN(p) ? null : new LatencyWindow(p, ticker.getAsLong()), p, ticker,
        policy.fixedDelayNanos(), new RecentCounts(ticker),
        new RetryBudget(policy.percentCanHedge(), policy.minHedgesPerSecond(), ticker), policy.loserHoldNanos(),
        scheduler);
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix.endsWith("-") ? prefix + count.incrementAndGet() : prefix);
      thread.setDaemon(true);
      return thread;
    };
  }

  /**
   * One service's hedge delay, its hedge budget and the counts behind the extra-load gauge. Thread-safe.
   *
   * <p>A percentile delay is the percentile of the first copy's own target when that target's
   * window holds {@link HedgingPolicy#MIN_SAMPLES} responses, else the service's: one slow target
   * would otherwise set the delay for all, and the fast targets' slow calls would be hedged late.
   * Each target's window is made on its first response and dropped once it held nothing for a
   * whole window (checked every {@value #SWEEP_SECONDS} s), so targets that left cost nothing.
   */
  static final class RouteHedging {
    static final int SWEEP_SECONDS = 10;
    private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(SWEEP_SECONDS);

    final @Nullable LatencyWindow window; // null for a fixed delay
    private final double percentile; // NaN for a fixed delay
    private final LongSupplier ticker;
    /** Each target's window (percentile delays only); entries made on first use, swept when empty. */
    private final ConcurrentHashMap<Target, LatencyWindow> byTarget = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicBoolean sweeping = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile long nextSweepNanos;
    private final long fixedDelayNanos;
    final RecentCounts counts;
    /** Copies that lost a race, whose slots are held while their servers presumably still work on them. */
    final HeldLosers losers;
    /** The hedges' own budget (the policy's share of hedgeable calls); the retry budget comes on top. */
    final RetryBudget budget;

    RouteHedging(@Nullable LatencyWindow window, long fixedDelayNanos, RecentCounts counts, RetryBudget budget) {
      this(window, Double.NaN, System::nanoTime, fixedDelayNanos, counts, budget, HedgingPolicy.DEFAULT_LOSER_HOLD.toNanos(),
          null);
    }

    RouteHedging(@Nullable LatencyWindow window, double percentile, LongSupplier ticker, long fixedDelayNanos,
        RecentCounts counts, RetryBudget budget, long loserHoldNanos, @Nullable Scheduler scheduler) {
      this.losers = new HeldLosers(loserHoldNanos, ticker, scheduler);
      this.window = window;
      this.percentile = percentile;
      this.ticker = ticker;
      this.fixedDelayNanos = fixedDelayNanos;
      this.counts = counts;
      this.budget = budget;
      this.nextSweepNanos = ticker.getAsLong() + SWEEP_NANOS;
    }

    long nowNanos() {
      return ticker.getAsLong();
    }

    /** The service-wide delay before a hedge of a call starting now, or -1 for none. */
    long delayNanos(long nowNanos) {
      return window == null ? fixedDelayNanos : window.delayNanos(nowNanos);
    }

    /**
     * The delay before a hedge of a call whose first copy goes to {@code target}, starting now: the
     * percentile of that target's responses once it has enough, else the service's; or -1 for none
     * (the service's window is not full yet).
     */
    long delayNanos(Target target, long nowNanos) {
      losers.expire(nowNanos); // one volatile read while nothing is held
      LatencyWindow service = window;
      if (service == null) {
        return fixedDelayNanos;
      }
      long serviceDelay = service.delayNanos(nowNanos);
      if (serviceDelay < 0) {
        return -1;
      }
      if (nowNanos - nextSweepNanos >= 0) {
        sweep(nowNanos);
      }
      LatencyWindow own = byTarget.get(target);
      long ownDelay = own == null ? -1 : own.delayNanos(nowNanos);
      return ownDelay >= 0 ? ownDelay : serviceDelay;
    }

    /**
     * How long, on average, {@code target}'s responses slower than its hedge delay took beyond it
     * (the service's figure while the target has no window of its own); -1 when not known.
     */
    long tailWaitNanos(Target target) {
      LatencyWindow own = byTarget.get(target);
      long wait = own == null ? -1 : own.tailWaitNanos();
      LatencyWindow service = window;
      return wait >= 0 || service == null ? wait : service.tailWaitNanos();
    }

    /**
     * The median response time of {@code target} (the service's while the target's own window has
     * too few responses), or -1 when not known.
     */
    long medianNanos(Target target) {
      LatencyWindow own = byTarget.get(target);
      long median = own == null ? -1 : own.medianNanos();
      LatencyWindow service = window;
      return median >= 0 || service == null ? median : service.medianNanos();
    }

    /** A usable response time of one copy; nothing for a fixed delay. */
    void record(long nanos) {
      if (window != null) {
        window.record(nanos);
      }
    }

    /** A usable response time of one copy sent to {@code target}: in the service's window and the target's. */
    void record(Target target, long nanos) {
      LatencyWindow service = window;
      if (service == null) {
        return;
      }
      service.record(nanos);
      LatencyWindow own = byTarget.get(target);
      if (own == null) {
        own = byTarget.computeIfAbsent(target,
            t -> new LatencyWindow(percentile, ticker.getAsLong(), LatencyWindow.TARGET_DIGITS));
      }
      own.record(nanos);
    }

    /** Drops the windows of targets that answered nothing for a whole window. One caller at a time. */
    private void sweep(long nowNanos) {
      if (!sweeping.compareAndSet(false, true)) {
        return;
      }
      try {
        nextSweepNanos = nowNanos + SWEEP_NANOS;
        byTarget.entrySet().removeIf(e -> e.getValue().idle(nowNanos));
      } finally {
        sweeping.set(false);
      }
    }

    /** Targets with a window of their own; for tests. */
    int targetWindows() {
      return byTarget.size();
    }

    /** Hedges sent per call of this service over the last 10 s (0 without calls). */
    double extraLoad() {
      return counts.extraLoad();
    }
  }
}
