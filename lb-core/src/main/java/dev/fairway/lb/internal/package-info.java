/**
 * Helpers that Fairway's own modules share: failure classification, the rule that turns an HTTP
 * response into its pick's outcome ({@code OutcomeRule}) with the load-report meters it counts into,
 * the retry rules ({@code RetryRule}), retry budget ({@code AttemptBudget}) and call meters
 * ({@code CallMeters}, with {@code AttemptOutcome}, the rule that completes an attempt's pick)
 * every HTTP client integration uses, the backoff wait a cancel ends
 * ({@code CancellableWait}), the affinity-key rule of request headers ({@code AffinityHeaders}),
 * list comparison, argument messages and the builders' set-once rule.
 *
 * <p><b>Not public API.</b> Like {@code okhttp3.internal}, this package may change or disappear in
 * any release without notice; code outside Fairway must not use it.
 */
@NullMarked
package dev.fairway.lb.internal;

import org.jspecify.annotations.NullMarked;
