package dev.fairway.lb.okhttp;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * lb-okhttp's name for {@link dev.fairway.lb.HedgingPolicy}, kept so that code written against it
 * compiles and behaves as before: every method makes the same policy, with the same validation and
 * messages, as the core type's, and {@link LoadBalancingInterceptor.Builder#hedging(HedgingPolicy)}
 * hedges exactly as with the core type. The policy now lives in lb-core because every client
 * integration (OkHttp, the JDK's {@code HttpClient}) takes the same one.
 *
 * <p>Immutable and thread-safe.
 *
 * @deprecated use {@link dev.fairway.lb.HedgingPolicy} (same factories and methods) with {@link
 *     LoadBalancingInterceptor.Builder#hedging(dev.fairway.lb.HedgingPolicy)}.
 */
@Deprecated
public final class HedgingPolicy {
  /** Responses the percentile window must hold before a percentile delay is used. */
  public static final int MIN_SAMPLES = dev.fairway.lb.HedgingPolicy.MIN_SAMPLES;
  /** The default share of hedgeable calls that may get a hedge, over the budget's window. */
  public static final double DEFAULT_PERCENT_CAN_HEDGE = dev.fairway.lb.HedgingPolicy.DEFAULT_PERCENT_CAN_HEDGE;
  /** The default hedges a second a service may have on top of its share. */
  public static final int DEFAULT_MIN_HEDGES_PER_SECOND = dev.fairway.lb.HedgingPolicy.DEFAULT_MIN_HEDGES_PER_SECOND;
  /** The default longest time a cancelled losing copy keeps its in-flight slot: {@link #withLoserHold}. */
  public static final Duration DEFAULT_LOSER_HOLD = dev.fairway.lb.HedgingPolicy.DEFAULT_LOSER_HOLD;

  private final dev.fairway.lb.HedgingPolicy core;

  private HedgingPolicy(dev.fairway.lb.HedgingPolicy core) {
    this.core = core;
  }

  /** As {@link dev.fairway.lb.HedgingPolicy#fixedDelay(Duration)}. */
  public static HedgingPolicy fixedDelay(Duration delay) {
    return new HedgingPolicy(dev.fairway.lb.HedgingPolicy.fixedDelay(delay));
  }

  /** As {@link dev.fairway.lb.HedgingPolicy#percentile(double)}. */
  public static HedgingPolicy percentile(double percentile) {
    return new HedgingPolicy(dev.fairway.lb.HedgingPolicy.percentile(percentile));
  }

  /** As {@link dev.fairway.lb.HedgingPolicy#withBudget(double, int)}. */
  public HedgingPolicy withBudget(double percentCanHedge, int minHedgesPerSecond) {
    return new HedgingPolicy(core.withBudget(percentCanHedge, minHedgesPerSecond));
  }

  /** As {@link dev.fairway.lb.HedgingPolicy#withLoserHold(Duration)}. */
  public HedgingPolicy withLoserHold(Duration maxHold) {
    return new HedgingPolicy(core.withLoserHold(maxHold));
  }

  /** The same policy as lb-core's type. */
  dev.fairway.lb.HedgingPolicy core() {
    return core;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof HedgingPolicy other && other.core.equals(core);
  }

  @Override
  public int hashCode() {
    return core.hashCode();
  }

  @Override
  public String toString() {
    return core.toString();
  }
}
