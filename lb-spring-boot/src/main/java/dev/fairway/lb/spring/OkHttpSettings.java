package dev.fairway.lb.spring;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;

/**
 * The OkHttp path's settings of one service, applied to a {@link LoadBalancingInterceptor.Builder}
 * setter by setter, so each value meets the builder's own check and a rejected one names its
 * property: {@code hedging} with {@code hedging.loser-hold} (read by {@link HedgingSettings}, as the
 * Apache HttpClient 5 path reads them), {@code max-attempts}, {@code retry-budget.*}, {@code
 * failure-status-codes} and {@code affinity-header}.
 */
final class OkHttpSettings {
  private OkHttpSettings() {}

  /** A builder for {@code service}'s interceptor with every OkHttp setting applied; throws naming the property. */
  static LoadBalancingInterceptor.Builder interceptorFor(ServiceSettings s) {
    LoadBalancingInterceptor.Builder b = LoadBalancingInterceptor.builder();
    HedgingPolicy hedging = HedgingSettings.of(s);
    if (hedging != null) {
      b.hedging(hedging);
    }
    Integer attempts = s.maxAttempts.value();
    if (attempts != null) {
      ServiceSettings.check(s.maxAttempts.property(), () -> b.maxAttempts(attempts));
    }
    Double percent = s.retryPercent.value();
    Integer perSecond = s.retryMinPerSecond.value();
    if (percent != null || perSecond != null) {
      double p = percent != null ? percent : 0.2;
      int m = perSecond != null ? perSecond : 10;
      String property = percent != null && !(p >= 0.0 && p <= 10.0) ? s.retryPercent.property() : s.retryMinPerSecond.property();
      ServiceSettings.check(property, () -> b.retryBudget(p, m));
    }
    b.failureStatusCodes(s.failureStatusCodes); // checked by ServiceSettings already
    // Retry statuses must be failure statuses too: keep the defaults that are.
    int[] retry = java.util.Arrays.stream(new int[] {502, 503, 504}).filter(s::isFailureStatus).toArray();
    b.retryStatusCodes(retry);
    if (s.affinityHeader != null) {
      b.affinityKey(dev.fairway.lb.okhttp.AffinityKey.header(s.affinityHeader));
    }
    return b;
  }
}
