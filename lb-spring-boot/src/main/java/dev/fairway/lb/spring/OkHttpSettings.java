package dev.fairway.lb.spring;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The OkHttp path's settings of one service, applied to a {@link LoadBalancingInterceptor.Builder}
 * setter by setter, so each value meets the builder's own check and a rejected one names its
 * property: {@code hedging} ({@code off}, {@code p95}, {@code p99}, {@code pNN} or a delay such as
 * {@code 50ms} / {@code 1s}) with {@code hedging.loser-hold}, {@code max-attempts}, {@code retry-budget.*},
 * {@code failure-status-codes} and {@code affinity-header}.
 */
final class OkHttpSettings {
  private static final Pattern PERCENTILE = Pattern.compile("p(\\d{2}(?:\\.\\d{1,2})?)");
  private static final Pattern DELAY = Pattern.compile("(\\d{1,9})(ms|s)");

  private OkHttpSettings() {}

  /** A builder for {@code service}'s interceptor with every OkHttp setting applied; throws naming the property. */
  static LoadBalancingInterceptor.Builder interceptorFor(ServiceSettings s) {
    LoadBalancingInterceptor.Builder b = LoadBalancingInterceptor.builder();
    HedgingPolicy hedging = hedging(s.hedging);
    Duration hold = s.loserHold.value();
    if (hedging != null && hold != null) {
      HedgingPolicy h = hedging;
      hedging = ServiceSettings.check(s.loserHold.property(), () -> h.withLoserHold(hold));
    }
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

  /** The hedging policy a {@code hedging} value names; null for none. */
  static @Nullable HedgingPolicy hedging(ServiceSettings.Value<String> setting) {
    String value = setting.value();
    if (value == null || value.equals("off")) {
      return null;
    }
    Matcher p = PERCENTILE.matcher(value);
    if (p.matches()) {
      double percentile = Double.parseDouble(p.group(1));
      return ServiceSettings.check(setting.property(), () -> HedgingPolicy.percentile(percentile));
    }
    Matcher d = DELAY.matcher(value);
    if (d.matches()) {
      long n = Long.parseLong(d.group(1));
      Duration delay = d.group(2).equals("ms") ? Duration.ofMillis(n) : Duration.ofSeconds(n);
      return ServiceSettings.check(setting.property(), () -> HedgingPolicy.fixedDelay(delay));
    }
    throw new FairwayConfigurationException(setting.property(), setting.property() + ": \"" + value
        + "\" (expected: off, p95, p99 or a delay such as 50ms)");
  }
}
