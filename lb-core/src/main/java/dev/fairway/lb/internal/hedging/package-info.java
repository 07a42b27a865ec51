/**
 * The hedging engine every client integration shares: the decisions of {@link
 * dev.fairway.lb.HedgingPolicy}, with no client's types in it. A client keeps only the race over its
 * own call type (lb-okhttp's {@code HedgeRace} over {@code okhttp3.Call}, lb-jdk-httpclient's over
 * the JDK's {@code CompletableFuture} exchange, lb-apache-httpclient5's {@code ClassicHedgeRace} and
 * {@code AsyncHedgeRace} over HttpClient's exec chains).
 *
 * <ul>
 *   <li>{@link dev.fairway.lb.internal.hedging.Hedger}: what a client's services share to hedge (the
 *       policy, the timer, the hedge pool, the clock); makes one {@link
 *       dev.fairway.lb.internal.hedging.ServiceHedging} per service.
 *   <li>{@link dev.fairway.lb.internal.hedging.ServiceHedging}: one service's three decisions (the
 *       delay, a pure read; the hedge's target, by the free-worker and queue judge; what outcomes
 *       teach) and both budgets, over {@link dev.fairway.lb.internal.hedging.LatencyWindow} (a
 *       percentile of recent response times, the service's and each target's), {@link
 *       dev.fairway.lb.internal.hedging.RecentCounts} (the extra-load gauge) and {@link
 *       dev.fairway.lb.internal.hedging.HeldLosers} (losing copies whose slots stay held).
 *   <li>{@link dev.fairway.lb.internal.hedging.HedgeTimer} (one thread for the JVM) fires races, each
 *       a {@link dev.fairway.lb.internal.hedging.TimerNode}, so arming allocates nothing. Every race
 *       extends {@link dev.fairway.lb.internal.hedging.HedgeTrigger}, the hedge's half of a race: its
 *       state, the timer's firing, and the order in which the hedge is picked, paid for and sent.
 *   <li>{@link dev.fairway.lb.internal.hedging.HedgeMeters}: {@code fairway.hedges} and {@code
 *       fairway.hedges.extra.load}, the same names and tags from every client.
 * </ul>
 *
 * <p><b>Not public API.</b> Like {@code okhttp3.internal}, this package may change or disappear in
 * any release without notice; code outside Fairway must not use it.
 */
@NullMarked
package dev.fairway.lb.internal.hedging;

import org.jspecify.annotations.NullMarked;
