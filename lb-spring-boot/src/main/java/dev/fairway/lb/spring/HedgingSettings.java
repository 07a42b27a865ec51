package dev.fairway.lb.spring;

import dev.fairway.lb.HedgingPolicy;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A service's {@code hedging} ({@code off}, {@code p95}, {@code p99}, {@code pNN} or a delay such
 * as {@code 50ms} / {@code 1s}) with {@code hedging.loser-hold}, as lb-core's {@link HedgingPolicy}:
 * read the same way by the OkHttp path ({@link OkHttpSettings}) and the Apache HttpClient 5 path
 * ({@link HttpClient5Settings}). Each value meets the policy's own check, and a rejected one names
 * its property. Needs lb-core only, so either path works without the other's client.
 */
final class HedgingSettings {
  private static final Pattern PERCENTILE = Pattern.compile("p(\\d{2}(?:\\.\\d{1,2})?)");
  private static final Pattern DELAY = Pattern.compile("(\\d{1,9})(ms|s)");

  private HedgingSettings() {}

  /** {@code service}'s hedging policy with its loser-hold applied; null for none. Throws naming the property. */
  static @Nullable HedgingPolicy of(ServiceSettings s) {
    HedgingPolicy hedging = policy(s.hedging);
    Duration hold = s.loserHold.value();
    if (hedging != null && hold != null) {
      HedgingPolicy h = hedging;
      hedging = ServiceSettings.check(s.loserHold.property(), () -> h.withLoserHold(hold));
    }
    return hedging;
  }

  /** The hedging policy a {@code hedging} value names (loser-hold not applied); null for none. */
  static @Nullable HedgingPolicy policy(ServiceSettings.Value<String> setting) {
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
