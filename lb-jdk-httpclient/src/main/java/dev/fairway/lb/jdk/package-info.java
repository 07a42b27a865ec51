/**
 * The JDK's {@code java.net.http.HttpClient}, balanced: {@link dev.fairway.lb.jdk.FairwayHttpClient}
 * wraps a client of yours, sends each request to a logical host (say {@code http://orders/...}) to
 * a target chosen by that service's {@link dev.fairway.lb.LoadBalancer}, retries on another target
 * when that is safe, and reports every outcome back to the balancer.
 *
 * <p>Public API: {@link dev.fairway.lb.jdk.FairwayHttpClient}, with its builder and the
 * idempotency marks of a request ({@code FairwayHttpClient.idempotent(request)}), and {@link
 * dev.fairway.lb.jdk.AffinityKey} (a request's affinity key, read by lb-core's {@code
 * AffinityHeaders} rule). Every package-private class here is an implementation detail and
 * may change.
 *
 * <h2>A map of the package</h2>
 *
 * <ul>
 *   <li>Wiring: {@code FairwayHttpClient} (the builder, the delegation of every other method; one
 *       {@code ServiceRoute} per logical host: its balancer, its retry {@code AttemptBudget}, its
 *       {@code OutcomeRule}, its {@code TargetUris}: each target's
 *       authority and the last URI routed to it, so a repeated request parses no URI).
 *   <li>One call: {@code BalancedExchange} (the state and decisions of one call, with two drivers:
 *       {@code send} loops on the caller's thread, {@code sendAsync} chains the delegate's futures)
 *       over lb-core's {@code RetryRule} (which failure or status is retried, the backoff) and
 *       {@code Sleeper} (the backoff's wait). Each attempt is an {@code Attempt}, the only place a
 *       pick is completed. {@code AttemptHandler} wraps the caller's body handler: it reports the
 *       headers, then either tracks the caller's body subscriber (the attempt completes when the
 *       body is consumed, fails or is cancelled) or keeps a retryable response's body for a
 *       retry; {@code ReplayedResponse} hands a kept body to the caller when no retry is made.
 *   <li>Hedging ({@link dev.fairway.lb.jdk.FairwayHttpClient.Builder#hedging}): lb-core's engine
 *       ({@code dev.fairway.lb.internal.hedging}: {@code ServiceHedging} makes every decision, the
 *       same as lb-okhttp's) held by the {@code ServiceRoute}; {@code HedgeRace} is the race of one
 *       call's first attempt against its hedge over the JDK's async exchanges, decided at the
 *       response headers, the loser settled before its exchange is cancelled.
 *   <li>Requests: {@code RoutedRequest} (the caller's request aimed at one target, delegating, not
 *       copied) and {@code MarkedRequest} (an idempotency mark on a request).
 * </ul>
 *
 * <p>A call flows: {@code BalancedExchange} pays into the budget, picks, and sends a {@code
 * RoutedRequest} through the delegate with an {@code AttemptHandler}. An I/O failure completes the
 * attempt and asks {@code RetryRule} for another; a response either goes to the caller (its body
 * completes the attempt) or, for a retryable status, completes the attempt as a failure and the
 * call picks again, withdrawing from the budget first.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.jdk;

import org.jspecify.annotations.NullMarked;
