package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One service's hedging: the owner of its three decisions and of the state they read. Thread-safe.
 *
 * <ul>
 *   <li><b>Delay</b> ({@link #delayNanos}): when a call's hedge is due. A pure read of what the last
 *       maintenance found.
 *   <li><b>Choice</b> ({@link #chooseHedge}): where a hedge whose timer fired goes, if anywhere.
 *   <li><b>Record</b>: what the copies' outcomes teach. Response times feed the percentile delay
 *       ({@link #recordResponse}, {@link #record}); a copy that answered lets the copies held on its
 *       target go ({@link #responded}); a losing copy cancelled before its answer keeps its slot
 *       ({@link #hold}).
 * </ul>
 *
 * <p>Maintenance is asked for by name, never done by a read: {@link #maintain} on a hedgeable call's
 * first attempt, before it reads its delay (ends holds that are over, refreshes the windows the delay
 * reads, drops the windows of targets gone quiet), and {@link #tick} on the hedge timer's ticks
 * while losing copies are held, so that a hold ends on time though no call comes. This class is the
 * only one that drives {@link HeldLosers}.
 *
 * <p>A percentile delay is the percentile of the first copy's own target when that target's window
 * holds {@link HedgingPolicy#MIN_SAMPLES} responses, else the service's: one slow target would
 * otherwise set the delay for all, and the fast targets' slow calls would be hedged late. Each
 * target's window is made on its first response and dropped once it held nothing for a whole window
 * (checked every {@value #SWEEP_SECONDS} s), so targets that left cost nothing.
 *
 * <p>Two budgets bound the hedges: their own ({@link HedgingPolicy#withBudget}), deposited into by
 * hedgeable calls, and the route's, which retries draw on too. A hedge takes a token from both or
 * is not sent.
 */
public final class ServiceHedging {
  public static final int SWEEP_SECONDS = 10;
  private static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(SWEEP_SECONDS);

  public final String host;
  /** Fires the races' hedge timers and watches this service while it holds losing copies. */
  public final Hedger.Scheduler scheduler;
  /** Where hedges run: picking and sending one may block. */
  public final Executor pool;
  private final LongSupplier ticker;
  private final LoadBalancer loadBalancer;
  private final HedgeMeters metrics;
  /** The route's budget, which retries draw on too. */
  private final AttemptBudget retries;
  /** The hedges' own budget (the policy's share of hedgeable calls). */
  private final AttemptBudget budget;
  private final RecentCounts counts;
  private final HeldLosers losers;
  /** Set while the scheduler ticks this ({@link Hedger.Scheduler#watch}); cleared by {@link #unwatched}. */
  private final AtomicBoolean watched = new AtomicBoolean();

  private final long fixedDelayNanos; // -1 for a percentile delay
  private final double percentile; // NaN for a fixed delay
  /** The service's window; null for a fixed delay. */
  public final @Nullable LatencyWindow window;
  /** Each target's window (percentile delays only); entries made on first use, swept when empty. */
  private final ConcurrentHashMap<Target, LatencyWindow> byTarget = new ConcurrentHashMap<>();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private volatile long nextSweepNanos;

  public ServiceHedging(String host, HedgingPolicy policy, LoadBalancer loadBalancer, HedgeMeters metrics,
      AttemptBudget retries, Hedger.Scheduler scheduler, Executor pool, LongSupplier ticker) {
    this.host = host;
    this.scheduler = scheduler;
    this.pool = pool;
    this.ticker = ticker;
    this.loadBalancer = loadBalancer;
    this.metrics = metrics;
    this.retries = retries;
    this.budget = new AttemptBudget(policy.percentCanHedge(), policy.minHedgesPerSecond(), ticker);
    this.counts = new RecentCounts(ticker);
    this.losers = new HeldLosers(policy.loserHoldNanos());
    this.fixedDelayNanos = policy.fixedDelayNanos();
    this.percentile = policy.percentileValue();
    long now = ticker.getAsLong();
    this.window = Double.isNaN(percentile) ? null : new LatencyWindow(percentile, now);
    this.nextSweepNanos = now + SWEEP_NANOS;
  }

  /** The clock of every time this class is given and keeps. */
  public long nowNanos() {
    return ticker.getAsLong();
  }

  /** A call of this service begins: counted for the extra-load gauge; a hedgeable one pays into the hedge budget. */
  public void callStarted(boolean hedgeable) {
    counts.call();
    if (hedgeable) {
      budget.deposit();
    }
  }

  // --- Maintenance -------------------------------------------------------------------------

  /**
   * The maintenance a hedgeable call's first attempt, to {@code first}, runs at {@code nowNanos}
   * before it reads its delay: ends the holds that are over, refreshes the service's window and
   * {@code first}'s if due, and drops the windows of targets that answered nothing for a whole
   * window. A few volatile reads when nothing is due.
   */
  public void maintain(Target first, long nowNanos) {
    losers.expire(nowNanos); // one volatile read while nothing is held
    LatencyWindow service = window;
    if (service == null) {
      return;
    }
    service.refreshIfDue(nowNanos);
    if (service.delayNanos() < 0) {
      return; // no delay yet: the targets' windows are not read
    }
    if (nowNanos - nextSweepNanos >= 0) {
      sweep(nowNanos);
    }
    LatencyWindow own = byTarget.get(first);
    if (own != null) {
      own.refreshIfDue(nowNanos);
    }
  }

  /**
   * The hedge timer's maintenance, on each of its ticks while this is watched: releases the losing
   * copies whose hold is over; true while copies are still held.
   */
  public boolean tick() {
    losers.expire(ticker.getAsLong());
    return !losers.isEmpty();
  }

  /**
   * The timer stopped watching this (it held nothing at the last tick). True if a copy was held
   * since, unseen by that tick: the timer must watch again.
   */
  public boolean unwatched() {
    watched.set(false);
    return !losers.isEmpty() && watched.compareAndSet(false, true);
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

  // --- Decision 1: the delay ---------------------------------------------------------------

  /**
   * The delay before a hedge of a call whose first copy goes to {@code first}: the fixed delay, or
   * the percentile of that target's responses once it has enough, else the service's; -1 for no
   * hedge (the service's window is not full yet). Reads what the last {@link #maintain} found.
   */
  public long delayNanos(Target first) {
    LatencyWindow service = window;
    if (service == null) {
      return fixedDelayNanos;
    }
    long serviceDelay = service.delayNanos();
    if (serviceDelay < 0) {
      return -1;
    }
    LatencyWindow own = byTarget.get(first);
    long ownDelay = own == null ? -1 : own.delayNanos();
    return ownDelay >= 0 ? ownDelay : serviceDelay;
  }

  // --- Decision 2: the hedge's target ------------------------------------------------------

  /**
   * The target of a hedge whose timer fired, after the first copy to {@code first} has run {@code
   * elapsedNanos}, or null to send none: a single target, every other one ejected, or no other one
   * where a hedge is likely to pay (counted as {@code fairway.hedges{result=no_capacity}}). Called
   * on a hedge thread, at most once per call; the pick is the hedge's from then on.
   *
   * <p>A target known to have a free worker ({@link LoadBalancer#pickWithFreeWorker}) may take the
   * hedge. One known to be busy, or about which nothing tells (in a fleet without load reports), may
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
  public @Nullable Pick chooseHedge(@Nullable String affinityKey, Target first, long elapsedNanos) {
    try {
      long firstTailWait = tailWaitNanos(first);
      Pick pick;
      if (firstTailWait < 0) { // a fixed delay, or no tail yet: no response times to judge by
        pick = loadBalancer.pickWithFreeWorker(affinityKey, Set.of(first));
      } else {
        pick = loadBalancer.pickWithFreeWorker(affinityKey, Set.of(first), (target, knownBusy) -> {
          long median = medianNanos(target);
          if (median < 0) { // too few responses to judge by: as with a fixed delay
            return !knownBusy;
          }
          return 2 * median <= firstTailWait && 2 * median <= elapsedNanos;
        });
      }
      if (pick == null) {
        metrics.hedge(HedgeMeters.HEDGE_NO_CAPACITY);
      }
      return pick;
    } catch (NoTargetAvailableException e) {
      return null;
    }
  }

  /**
   * One token from the hedges' own budget and one from the route's, or neither; a refusal is
   * counted as {@code fairway.hedges{result=budget_exhausted}} by {@link #refused}.
   */
  public boolean tryWithdraw() {
    if (!budget.tryWithdraw()) {
      return false;
    }
    if (!retries.tryWithdraw()) {
      budget.refund();
      return false;
    }
    return true;
  }

  /** A hedge the budgets refused. */
  public void refused() {
    metrics.hedge(HedgeMeters.HEDGE_BUDGET_EXHAUSTED);
  }

  /** A hedge was sent. */
  public void sent() {
    metrics.hedge(HedgeMeters.HEDGE_SENT);
    counts.hedge();
  }

  /** A hedge's response was the one the caller got. */
  public void won() {
    metrics.hedge(HedgeMeters.HEDGE_WON);
  }

  /**
   * How long, on average, {@code target}'s responses slower than its hedge delay took beyond it
   * (the service's figure while the target has no window of its own); -1 when not known, and always
   * for a fixed delay.
   */
  public long tailWaitNanos(Target target) {
    LatencyWindow service = window;
    if (service == null) {
      return -1;
    }
    LatencyWindow own = byTarget.get(target);
    long wait = own == null ? -1 : own.tailWaitNanos();
    return wait >= 0 ? wait : service.tailWaitNanos();
  }

  /**
   * The median response time of {@code target} (the service's while the target's own window has
   * too few responses), or -1 when not known.
   */
  public long medianNanos(Target target) {
    LatencyWindow own = byTarget.get(target);
    long median = own == null ? -1 : own.medianNanos();
    LatencyWindow service = window;
    return median >= 0 || service == null ? median : service.medianNanos();
  }

  // --- Decision 3: what outcomes teach -----------------------------------------------------

  /**
   * The copy sent to {@code target} at {@code sentNanos} (by {@link #nowNanos}) has a usable
   * response now (or, for a copy cancelled because the other won, has run at least this long): its
   * time since it was sent is a response time of its target, for a
   * percentile delay. Nothing for a fixed delay, which reads no clock for it.
   */
  public void recordResponse(Target target, long sentNanos) {
    if (window != null) {
      record(target, ticker.getAsLong() - sentNanos);
    }
  }

  /** A usable response time of one copy sent to {@code target}: in the service's window and the target's. */
  public void record(Target target, long nanos) {
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

  /**
   * A copy sent to {@code target} at {@code sentNanos} got its response: the copies held on that
   * target that were sent before it are released (its server got past them). One volatile read
   * while nothing is held.
   */
  public void responded(Target target, long sentNanos) {
    if (!losers.isEmpty()) {
      losers.completed(target, sentNanos, ticker.getAsLong());
    }
  }

  /** False when the policy's hold is 0: a losing copy's slot is then freed at the cancel. */
  public boolean holdsLosers() {
    return losers.holds();
  }

  /**
   * Holds the slot of a losing copy sent to {@code target} at {@code sentNanos}, cancelled before
   * its answer, until {@code release} is run for it (once); the timer watches this service while
   * anything is held.
   */
  public void hold(Target target, Runnable release, long sentNanos) {
    // After the count went up: a timer that stops watching reads the count again afterwards.
    if (losers.hold(target, release, sentNanos, ticker.getAsLong()) && watched.compareAndSet(false, true)) {
      scheduler.watch(this);
    }
  }

  /** {@code target} left the service: its held copies are released. */
  public void targetRemoved(Target target) {
    losers.forget(target);
  }

  /** The balancer closed: nothing held outlives it, and nothing is held from now on. */
  public void closed() {
    losers.releaseAll();
  }

  /** Hedges sent per call of this service over the last 10 s (0 without calls). */
  public double extraLoad() {
    return counts.extraLoad();
  }

  /** Losing copies held now; for tests. */
  public int heldLosers() {
    return losers.held();
  }

  /** Targets with a window of their own; for tests. */
  public int targetWindows() {
    return byTarget.size();
  }
}
