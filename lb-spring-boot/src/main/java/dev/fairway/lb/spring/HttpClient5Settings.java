package dev.fairway.lb.spring;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.hc5.AffinityKey;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The Apache HttpClient 5 path's settings, applied to a {@link FairwayHttpClient5.Builder}. One
 * {@link FairwayHttpClient5} serves every service of the path, and its builder takes {@code
 * max-attempts}, {@code retry-budget.*}, {@code failure-status-codes}, {@code affinity-header} and
 * {@code hedging} (with {@code hedging.loser-hold}) for all of them at once: so each service's value
 * meets the builder's own check (a rejected one names its property), and then every service must
 * resolve to the same value, else startup fails naming the property and both values.
 *
 * <p>The hedging policy reaches every client of the path, the classic one under Boot's {@code
 * RestClient} and {@code RestTemplate} and the async ones built with {@link
 * FairwayHttpClient5Path#configure(org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder)}
 * ({@link FairwayHttpClient5}).
 */
final class HttpClient5Settings {
  static final String ENABLED = "fairway.httpclient5.enabled";
  private static final int DEFAULT_MAX_ATTEMPTS = 3; // FairwayHttpClient5.Builder's
  private static final double DEFAULT_RETRY_PERCENT = 0.2;
  private static final int DEFAULT_RETRY_MIN_PER_SECOND = 10;
  private static final String NO_AFFINITY_HEADER = "none";

  private HttpClient5Settings() {}

  /**
   * A builder with the settings the services share, checked; the caller adds the services.
   *
   * @throws FairwayConfigurationException naming the property: no service listed, a value the
   *     adapter rejects, or two services that differ in a setting the adapter applies to all
   */
  static FairwayHttpClient5.Builder builderFor(Map<String, ServiceSettings> services) {
    if (services.isEmpty()) {
      throw new FairwayConfigurationException(ENABLED, ENABLED + ": true while fairway.services lists no service"
          + " (expected: the services to balance, each under fairway.services.<id>)");
    }
    for (ServiceSettings s : services.values()) {
      check(s);
    }
    ServiceSettings first = services.values().iterator().next();
    Integer attempts = same(services, s -> s.maxAttempts, DEFAULT_MAX_ATTEMPTS, v -> v);
    Double percent = same(services, s -> s.retryPercent, DEFAULT_RETRY_PERCENT, v -> v);
    Integer perSecond = same(services, s -> s.retryMinPerSecond, DEFAULT_RETRY_MIN_PER_SECOND, v -> v);
    sameCodes(services);
    // Header names are case-insensitive: X-User and x-user are one key.
    String affinityHeader = same(services, s -> s.affinityHeaderSetting, NO_AFFINITY_HEADER,
        v -> v.toLowerCase(Locale.ROOT));
    HedgingPolicy hedging = sameHedging(services);

    FairwayHttpClient5.Builder b = FairwayHttpClient5.builder();
    if (attempts != null) {
      b.maxAttempts(attempts);
    }
    if (percent != null || perSecond != null) {
      b.retryBudget(percent != null ? percent : DEFAULT_RETRY_PERCENT,
          perSecond != null ? perSecond : DEFAULT_RETRY_MIN_PER_SECOND);
    }
    b.failureStatusCodes(first.failureStatusCodes);
    // Retry statuses must be failure statuses too: keep the defaults that are (as the OkHttp path does).
    b.retryStatusCodes(Arrays.stream(new int[] {502, 503, 504}).filter(first::isFailureStatus).toArray());
    if (affinityHeader != null) {
      b.affinityKey(AffinityKey.header(affinityHeader)); // a header name, checked by ServiceSettings
    }
    if (hedging != null) {
      b.hedging(hedging);
    }
    return b;
  }

  /** One service's values through the adapter builder's own checks, each naming its property. */
  private static void check(ServiceSettings s) {
    Integer attempts = s.maxAttempts.value();
    if (attempts != null) {
      ServiceSettings.check(s.maxAttempts.property(), () -> FairwayHttpClient5.builder().maxAttempts(attempts));
    }
    Double percent = s.retryPercent.value();
    Integer perSecond = s.retryMinPerSecond.value();
    if (percent != null || perSecond != null) {
      double p = percent != null ? percent : DEFAULT_RETRY_PERCENT;
      int m = perSecond != null ? perSecond : DEFAULT_RETRY_MIN_PER_SECOND;
      String property = percent != null && !(p >= 0.0 && p <= 10.0) ? s.retryPercent.property() : s.retryMinPerSecond.property();
      ServiceSettings.check(property, () -> FairwayHttpClient5.builder().retryBudget(p, m));
    }
  }

  /**
   * hedging with hedging.loser-hold: one policy for every service (null: none). A service whose
   * policy differs from the first one's names hedging if the two differ there, else loser-hold.
   */
  private static @Nullable HedgingPolicy sameHedging(Map<String, ServiceSettings> services) {
    ServiceSettings reference = null;
    HedgingPolicy expected = null;
    for (ServiceSettings s : services.values()) {
      HedgingPolicy actual = HedgingSettings.of(s);
      if (reference == null) {
        reference = s;
        expected = actual;
        continue;
      }
      if (!Objects.equals(expected, actual)) {
        if (!Objects.equals(HedgingSettings.policy(reference.hedging), HedgingSettings.policy(s.hedging))) {
          throw differs(reference.hedging, describe(reference.hedging.value(), "off"), s.hedging,
              describe(s.hedging.value(), "off"));
        }
        throw differs(reference.loserHold, hold(reference.loserHold.value()), s.loserHold, hold(s.loserHold.value()));
      }
      if (reference.hedging.value() == null && s.hedging.value() != null) {
        reference = s; // the same policy, set explicitly: the one to name later
      }
    }
    return expected;
  }

  private static String hold(@Nullable Duration hold) {
    if (hold == null) {
      return hold(HedgingPolicy.DEFAULT_LOSER_HOLD) + " (the default)";
    }
    long ms = hold.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }

  /**
   * The value every service resolves {@code setting} to (null: unset everywhere, the adapter's
   * default), two values being the same when their {@code key}s are equal; throws naming the
   * property of a service that differs from the first one.
   */
  private static <T> @Nullable T same(Map<String, ServiceSettings> services,
      Function<ServiceSettings, ServiceSettings.Value<T>> setting, T defaultValue, Function<T, Object> key) {
    ServiceSettings.Value<T> reference = null;
    for (ServiceSettings s : services.values()) {
      ServiceSettings.Value<T> v = setting.apply(s);
      if (reference == null) {
        reference = v;
        continue;
      }
      T expected = reference.value() != null ? reference.value() : defaultValue;
      T actual = v.value() != null ? v.value() : defaultValue;
      if (!Objects.equals(key.apply(expected), key.apply(actual))) {
        throw differs(reference, describe(reference.value(), defaultValue), v, describe(v.value(), defaultValue));
      }
      if (reference.value() == null && v.value() != null) {
        reference = v; // the same value, set explicitly: the one to name later
      }
    }
    return reference == null ? null : reference.value();
  }

  /** failure-status-codes: the same set of codes for every service. */
  private static void sameCodes(Map<String, ServiceSettings> services) {
    ServiceSettings reference = null;
    for (ServiceSettings s : services.values()) {
      if (reference == null) {
        reference = s;
        continue;
      }
      int[] expected = reference.failureStatusCodes.clone();
      int[] actual = s.failureStatusCodes.clone();
      Arrays.sort(expected);
      Arrays.sort(actual);
      if (!Arrays.equals(expected, actual)) {
        ServiceSettings.Value<List<Integer>> r = reference.failureStatusCodesSetting;
        ServiceSettings.Value<List<Integer>> v = s.failureStatusCodesSetting;
        throw differs(r, codes(r.value(), reference.failureStatusCodes), v, codes(v.value(), s.failureStatusCodes));
      }
    }
  }

  /** A value inherited from {@code fairway.default}. */
  private static boolean isDefault(ServiceSettings.Value<?> v) {
    return v.property().startsWith("fairway.default.");
  }

  private static String codes(@Nullable List<Integer> set, int[] resolved) {
    String list = Arrays.toString(resolved).replaceAll("[\\[\\] ]", "");
    return set == null ? list + " (the default)" : list;
  }

  private static String describe(@Nullable Object value, Object defaultValue) {
    return value == null ? defaultValue + " (the default)" : String.valueOf(value);
  }

  /**
   * The message for two services that differ: it names the one that sets its value; when both do,
   * the one set under {@code fairway.services.<id>} rather than inherited from {@code
   * fairway.default}, else the later one. The other one's property and value are the expected. The
   * services' order is the binding's, which need not be the order they were written in: so the one
   * named does not depend on it where it can be helped.
   */
  private static FairwayConfigurationException differs(ServiceSettings.Value<?> first, String firstValue,
      ServiceSettings.Value<?> later, String laterValue) {
    boolean blameFirst = (later.value() == null && first.value() != null)
        || (first.value() != null && isDefault(later) && !isDefault(first));
    ServiceSettings.Value<?> named = blameFirst ? first : later;
    ServiceSettings.Value<?> other = blameFirst ? later : first;
    String namedValue = blameFirst ? firstValue : laterValue;
    String otherValue = blameFirst ? laterValue : firstValue;
    return new FairwayConfigurationException(named.property(), named.property() + ": " + namedValue
        + " (expected: " + otherValue + ", as " + other.property() + ": the Apache HttpClient 5 path applies one"
        + " value to every service, see " + ENABLED + ")");
  }
}
