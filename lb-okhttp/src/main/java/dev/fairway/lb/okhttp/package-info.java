/**
 * OkHttp integration: {@link dev.fairway.lb.okhttp.LoadBalancingInterceptor} sends each call to a
 * logical host (say {@code http://orders/...}) to a target chosen by that service's
 * {@link dev.fairway.lb.LoadBalancer}, retries on another target when that is safe, hedges a slow
 * call when asked to, and reports every outcome back to the balancer.
 *
 * <p>Public API: {@link dev.fairway.lb.okhttp.LoadBalancingInterceptor},
 * {@link dev.fairway.lb.okhttp.AffinityKey}, {@link dev.fairway.lb.okhttp.HttpHealthProbe},
 * {@link dev.fairway.lb.okhttp.Idempotency} and the deprecated {@link dev.fairway.lb.okhttp.HedgingPolicy}
 * (lb-core's {@link dev.fairway.lb.HedgingPolicy} under its former name). Every
 * package-private class here is an implementation detail and may change.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code LoadBalancingInterceptor} (the builder; one {@code ServiceRoute} per logical
 *       host) and {@code ServiceRoute} (one service: its balancer, its retry {@code AttemptBudget}, its
 *       {@code CallMetrics}, its {@code TargetUrls}, and its {@code ServiceHedging} when the
 *       interceptor hedges; listens to the balancer so that a departed target's state goes).
 *   <li>One call: {@code BalancedCall} (the loop: pick, send, decide, retry; it owns the call's
 *       state) with lb-core's {@code RetryRule} (the pure decisions every HTTP integration shares:
 *       resendable, hedgeable, which failure or status is retried, the backoff), {@code
 *       RequestSafety} (reads an OkHttp request for it) and {@code Sleeper} (the backoff's wait). Each
 *       attempt is an {@code Attempt}, the only place a pick is completed and its timing recorded,
 *       and a tracked body ({@code TrackedResponseBody}) completes it when the caller is done.
 *       {@code Interrupts} ends a call whose caller was interrupted.
 *   <li>Budgets: lb-core's {@code AttemptBudget} (Finagle's retry budget: tokens for attempts beyond
 *       the first). Retries draw on the route's; hedges on their own and the route's.
 *   <li>Hedging, one owner per service, in lb-core's {@code dev.fairway.lb.internal.hedging} (the
 *       engine every client integration shares): {@code ServiceHedging} makes the three decisions (the delay,
 *       a pure read; the hedge's target; what outcomes teach) over {@code LatencyWindow} (a
 *       percentile of recent response times, the service's and each target's), {@code
 *       RecentCounts} (the extra-load gauge) and {@code HeldLosers} (losing copies whose slots stay
 *       held; driven by {@code ServiceHedging} alone). {@code Hedger} is what an interceptor's
 *       services share: the policy, the timer, the hedge pool and the clock. Only the race over
 *       OkHttp's {@code Call} is this package's:
 *   <li>The race: {@code HedgeRace} holds one hedged call's race state and nothing else; each copy
 *       is a {@code RaceLeg} (a tagged clone of the caller's call, its attempt and its outcome).
 *       {@code HedgeTimer} (one thread for the JVM) fires races, each a {@code TimerNode}, so arming
 *       allocates nothing.
 *   <li>{@code CallMetrics}: lb-core's {@code CallMeters} (calls, retries, the budget, leaked
 *       bodies) and {@code HedgeMeters} (the hedging meters), the same in every client integration;
 *       both no-ops without a registry. {@code TargetUrls}: each target's canonical base URL.
 *       {@code AffinityKeys}: reads {@code AffinityKey}'s headers from a request; the parsing is
 *       lb-core's {@code AffinityHeaders}, shared with the other client integrations.
 * </ul>
 *
 * <p>A call flows: {@code BalancedCall} pays into the budgets, picks, and sends its attempt. A
 * hedgeable call's first attempt first runs {@code ServiceHedging.maintain} (holds that are over
 * end, windows due are refreshed) and reads {@code ServiceHedging.delayNanos}; with a delay known,
 * a {@code HedgeRace} arms the timer and runs the first leg on the caller's thread. If the timer
 * fires first, the hedge pool asks {@code ServiceHedging.chooseHedge} for a target and both budgets
 * for a token, and runs the hedge as the second leg. The race returns the first usable response and
 * ends in one {@code finally} that disarms the timer and settles the other leg: released, failed,
 * or held by {@code HeldLosers} while its server presumably still works on it. Maintenance runs by
 * name: {@code ServiceHedging.maintain} on the call path, {@code ServiceHedging.tick} on the
 * timer's ticks while copies are held.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.okhttp;

import org.jspecify.annotations.NullMarked;
