/**
 * Apache HttpClient 5 integration: {@link dev.fairway.lb.hc5.FairwayHttpClient5} adds an element to
 * a classic or async client's exec chain that sends each request to a logical host (say {@code
 * http://orders/...}) to a target chosen by that service's {@link dev.fairway.lb.LoadBalancer},
 * retries on another target when that is safe, and reports every outcome back to the balancer.
 *
 * <p>Public API: {@link dev.fairway.lb.hc5.FairwayHttpClient5} and its builder, and {@link
 * dev.fairway.lb.hc5.AffinityKey} (a request's affinity key, read by lb-core's {@code
 * AffinityHeaders} rule). Every
 * package-private class here is an implementation detail and may change.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code FairwayHttpClient5} (the builder, and {@code customize}, which places the
 *       handler and HttpClient's retry strategy on an {@code HttpClientBuilder}), {@code
 *       BalancingExecHandler} (the exec chain element: one {@code ServiceRoute} per logical host, any
 *       other request passes through, and reads the request's {@code AffinityKey} once per
 *       exchange) and {@code ServiceRoute} (one service: its balancer, its retry {@code
 *       AttemptBudget}, its {@code OutcomeRule}, and its {@code TargetRoutes}: each target's
 *       authority and the route last made for it, so an attempt builds no route).
 *   <li>One exchange: {@code BalancedExchange} (the loop: pick, send with the target's route,
 *       decide, retry; it owns the exchange's state) with lb-core's {@code RetryRule} (the decisions
 *       every HTTP integration shares) and {@code Sleeper} (the backoff's wait). Each attempt is an
 *       {@code Attempt}, the only place a pick is completed, and a {@code TrackedEntity} completes it
 *       when the caller has consumed or closed the response.
 *   <li>The async client: {@code BalancingAsyncExecHandler} (its exec chain element, sharing the
 *       classic handler's routes and rules) and {@code AsyncBalancedExchange} (the same loop driven
 *       by callbacks; an attempt completes when the exchange does), and {@code AsyncHedgeRace} (a
       hedgeable first attempt raced against one hedge, each copy on a forked runtime, with lb-core's
       {@code ServiceHedging} making every hedging decision).
 *   <li>The classic client's hedging: {@code ClassicHedgeRace} (the same race over the classic
 *       chain: each copy on a runtime forked with its own cancellation, the first on the caller's
 *       thread, sending the exchange's request aimed in place, the hedge on a hedge pool thread,
 *       sending a request of its own built from the request as it came; the exchange gets the
 *       winner's outcome).
 *   <li>{@code BalancedRetryStrategy}: HttpClient's own retry strategy, told to leave balanced
 *       exchanges to Fairway.
 * </ul>
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.hc5;

import org.jspecify.annotations.NullMarked;
