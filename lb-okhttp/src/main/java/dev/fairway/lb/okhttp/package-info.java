/**
 * OkHttp integration: {@link dev.fairway.lb.okhttp.LoadBalancingInterceptor} sends each call to a
 * logical host (say {@code http://orders/...}) to a target chosen by that service's
 * {@link dev.fairway.lb.LoadBalancer}, retries on another target when that is safe, and reports every
 * outcome back to the balancer.
 *
 * <p>Public API: {@link dev.fairway.lb.okhttp.LoadBalancingInterceptor},
 * {@link dev.fairway.lb.okhttp.AffinityKey}, {@link dev.fairway.lb.okhttp.HttpHealthProbe},
 * {@link dev.fairway.lb.okhttp.Idempotency} and {@link dev.fairway.lb.okhttp.HedgingPolicy}. Every
 * package-private class here is an implementation detail and may change.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.okhttp;

import org.jspecify.annotations.NullMarked;
