package dev.fairway.lb;

import dev.fairway.lb.internal.Args;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * When a client integration sends a hedge: a second copy of a call, to another target, once the
 * first has not answered within a delay (Dean and Barroso's "hedged request", Finagle's backup
 * request). The first usable response wins and the other copy is cancelled. One policy type for
 * every client: lb-okhttp's {@code LoadBalancingInterceptor.Builder.hedging} and lb-jdk-httpclient's
 * {@code FairwayHttpClient.Builder.hedging} take it, and make the same decisions from it (the
 * engine is lb-core's, {@code dev.fairway.lb.internal.hedging}).
 *
 * <ul>
 *   <li>{@link #fixedDelay(Duration)}: hedge every call still unanswered after the delay.
 *   <li>{@link #percentile(double)}: hedge after the given percentile of the recent response time
 *       of the target the call's first copy went to, so only the slowest {@code 100 - p} percent
 *       of each target's calls get a hedge (a service-wide percentile is set by its slowest target,
 *       and would hedge a fast target's slow calls late). The percentile is taken over about the
 *       last 10 seconds and refreshed every 2; a target whose window holds fewer than {@value
 *       #MIN_SAMPLES} responses uses the service's percentile, and until the service's window holds
 *       that many (looked at every 200 ms until then), calls are not hedged at all: a guess at
 *       start-up could double the load of a service that is slow because it is cold. For traffic
 *       under about 10 calls a second per service use {@link #fixedDelay(Duration)}.
 * </ul>
 *
 * <p>Either way a hedge goes only to a target that may have a worker free ({@link
 * LoadBalancer#pickWithFreeWorker}): when every other target is known to be busy
 * (by a fresh load report, or by the concurrency the balancer learned from its own calls while it
 * is their only client), no hedge is sent, counted as {@code fairway.hedges{result=no_capacity}}.
 * A target known to be busy, or about which neither signal tells (a fleet of clients without load
 * reports), may still take the hedge of a percentile policy when the hedge is likely to answer
 * first although it waits there: its median response time is at most half of the time the first
 * copy has run, and at most half of the time by which the first copy's target's responses slower
 * than the delay overran it, on average. A call stuck behind a rare slow response is so hedged
 * into a short queue, while at saturation with a tail of mere queueing hedging turns itself down
 * instead of displacing calls. A fixed-delay policy keeps no response times: any target not known to be
 * busy may take its hedge.
 *
 * <p>Two budgets bound the extra load. Hedges have one of their own, {@link #withBudget(double,
 * int)}: by default at most 5% of a service's hedgeable calls plus one hedge a second (so that
 * low traffic can hedge too), over a 10-second window. And every hedge also takes a token from the
 * budget retries draw from (the client's {@code retryBudget(double, int)}), so
 * retries and hedges together add at most that share of load. A hedge either budget refuses is not
 * sent (counted as {@code fairway.hedges{result=budget_exhausted}}).
 *
 * <p>A hedge costs the service a whole request even when it loses: most servers, the lab's
 * included, go on working on a request whose caller has gone until they write the response. At a
 * load that keeps every worker busy each hedge therefore displaces another call, and throughput
 * drops by about the hedge share; hedging pays where there is capacity to spare, which is why a
 * hedge goes only where a worker may be free (above), and why a copy that lost keeps its in-flight
 * slot for a while ({@link #withLoserHold}).
 *
 * <p>Immutable and thread-safe.
 */
public final class HedgingPolicy {
  /** Responses the percentile window must hold before a percentile delay is used. */
  public static final int MIN_SAMPLES = 100;
  /** The default share of hedgeable calls that may get a hedge, over the budget's window. */
  public static final double DEFAULT_PERCENT_CAN_HEDGE = 0.05;
  /** The default hedges a second a service may have on top of its share. */
  public static final int DEFAULT_MIN_HEDGES_PER_SECOND = 1;
  /** The default longest time a cancelled losing copy keeps its in-flight slot: {@link #withLoserHold}. */
  public static final Duration DEFAULT_LOSER_HOLD = Duration.ofSeconds(10);

  private final long fixedDelayNanos; // -1 for a percentile policy
  private final double percentile; // NaN for a fixed policy
  private final double percentCanHedge;
  private final int minHedgesPerSecond;
  private final long loserHoldNanos;

  private HedgingPolicy(long fixedDelayNanos, double percentile, double percentCanHedge, int minHedgesPerSecond) {
    this(fixedDelayNanos, percentile, percentCanHedge, minHedgesPerSecond, DEFAULT_LOSER_HOLD.toNanos());
  }

  private HedgingPolicy(long fixedDelayNanos, double percentile, double percentCanHedge, int minHedgesPerSecond,
      long loserHoldNanos) {
    this.loserHoldNanos = loserHoldNanos;
    this.fixedDelayNanos = fixedDelayNanos;
    this.percentile = percentile;
    this.percentCanHedge = percentCanHedge;
    this.minHedgesPerSecond = minHedgesPerSecond;
  }

  /**
   * Hedges a call that has no response after {@code delay}.
   *
   * @param delay 1 ms .. 1 hour
   * @throws IllegalArgumentException naming the value if {@code delay} is null or out of range
   */
  public static HedgingPolicy fixedDelay(Duration delay) {
    Args.requireArgument(delay != null && delay.compareTo(Duration.ofMillis(1)) >= 0
        && delay.compareTo(Duration.ofHours(1)) <= 0, "delay", delay, "1ms..1h");
    return new HedgingPolicy(delay.toNanos(), Double.NaN, DEFAULT_PERCENT_CAN_HEDGE, DEFAULT_MIN_HEDGES_PER_SECOND);
  }

  /**
   * Hedges a call that has no response after the {@code percentile} (say 95.0) of the recent
   * response times of its first copy's target (of the service's, until that target has enough) (time to response headers of usable responses; copies cancelled as
   * losers count with the time they had run, as Finagle counts superseded requests). At least 1 ms.
   *
   * @param percentile 50.0 .. 99.99
   * @throws IllegalArgumentException naming the value if out of range
   */
  public static HedgingPolicy percentile(double percentile) {
    Args.requireArgument(percentile >= 50.0 && percentile <= 99.99, "percentile", percentile, "50.0..99.99");
    return new HedgingPolicy(-1, percentile, DEFAULT_PERCENT_CAN_HEDGE, DEFAULT_MIN_HEDGES_PER_SECOND);
  }

  /**
   * This policy with its own hedge budget, a token bucket like the retry budget's: every hedgeable
   * call deposits {@code percentCanHedge} of a token, every hedge takes a whole one, and {@code
   * minHedgesPerSecond} tokens a second are there without deposits; both expire after 10 s. So
   * within any 10 s a service sends at most {@code percentCanHedge * hedgeable calls + 10 *
   * minHedgesPerSecond} hedges (and the retry budget may refuse some of those). Default 0.05 and 1.
   *
   * @param percentCanHedge 0.0 .. 1.0 (0.05 = at most 5% more calls)
   * @param minHedgesPerSecond 0 .. 10000
   * @throws IllegalArgumentException naming the field and value if either is out of range
   */
  public HedgingPolicy withBudget(double percentCanHedge, int minHedgesPerSecond) {
    Args.requireArgument(percentCanHedge >= 0.0 && percentCanHedge <= 1.0, "percentCanHedge", percentCanHedge, "0.0..1.0");
    Args.requireArgument(minHedgesPerSecond >= 0 && minHedgesPerSecond <= 10_000,
        "minHedgesPerSecond", minHedgesPerSecond, "0..10000");
    return new HedgingPolicy(fixedDelayNanos, percentile, percentCanHedge, minHedgesPerSecond, loserHoldNanos);
  }

  /**
   * How long at most a copy that lost the race and was cancelled before its answer keeps its
   * in-flight slot on its target (default {@link #DEFAULT_LOSER_HOLD}). Most servers go on working
   * on a request whose caller has gone, so the slot stays held until a copy sent to that target
   * after it answers (a server that serves in order has then got to it), or until this hold ends
   * (within about a millisecond of its end, whether or not more calls come), or until the
   * balancer closes. A copy of a call that its caller cancelled or interrupted is never held: the
   * call ends, and its copies with it. Released at the cancel instead, that work would be hidden from the balancer: at saturation the
   * target whose calls were hedged would look free, get more calls, and queue them behind work
   * nobody waits for. {@link Duration#ZERO} releases at the cancel: for servers that stop work on a
   * request as soon as its caller cancels it.
   *
   * @param maxHold 0 .. 10 min
   * @throws IllegalArgumentException naming the field and value if out of range
   */
  public HedgingPolicy withLoserHold(Duration maxHold) {
    Args.requireArgument(maxHold != null && !maxHold.isNegative() && maxHold.compareTo(Duration.ofMinutes(10)) <= 0,
        "maxHold", maxHold, "0s..10m");
    return new HedgingPolicy(fixedDelayNanos, percentile, percentCanHedge, minHedgesPerSecond, maxHold.toNanos());
  }

  /** The longest a cancelled losing copy keeps its slot, in nanoseconds; 0 to release at the cancel. */
  public long loserHoldNanos() {
    return loserHoldNanos;
  }

  /** The share of hedgeable calls that may get a hedge. */
  public double percentCanHedge() {
    return percentCanHedge;
  }

  /** Hedges a second allowed on top of the share. */
  public int minHedgesPerSecond() {
    return minHedgesPerSecond;
  }

  /** The fixed delay in nanoseconds, or -1 for a percentile policy. */
  public long fixedDelayNanos() {
    return fixedDelayNanos;
  }

  /** The percentile, or NaN for a fixed policy. */
  public double percentileValue() {
    return percentile;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof HedgingPolicy other && other.fixedDelayNanos == fixedDelayNanos
        && Double.compare(other.percentile, percentile) == 0
        && Double.compare(other.percentCanHedge, percentCanHedge) == 0
        && other.minHedgesPerSecond == minHedgesPerSecond && other.loserHoldNanos == loserHoldNanos;
  }

  @Override
  public int hashCode() {
    return ((Long.hashCode(fixedDelayNanos) * 31 + Double.hashCode(percentile)) * 31
        + Double.hashCode(percentCanHedge)) * 31 + minHedgesPerSecond + 961 * Long.hashCode(loserHoldNanos);
  }

  @Override
  public String toString() {
    String budget = ", percentCanHedge=" + String.format(Locale.ROOT, "%s", percentCanHedge)
        + ", minHedgesPerSecond=" + minHedgesPerSecond
        + (loserHoldNanos == DEFAULT_LOSER_HOLD.toNanos() ? "" : ", loserHold=" + Duration.ofNanos(loserHoldNanos)) + "}";
    return fixedDelayNanos >= 0
        ? "HedgingPolicy{fixedDelay=" + Duration.ofNanos(fixedDelayNanos) + budget
        : "HedgingPolicy{percentile=" + String.format(Locale.ROOT, "%s", percentile) + budget;
  }
}
