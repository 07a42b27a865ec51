package dev.fairway.lb.spring;

import dev.fairway.lb.hc5.FairwayHttpClient5;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The Apache HttpClient 5 path's settings, applied to a {@link FairwayHttpClient5.Builder}. One
 * {@link FairwayHttpClient5} serves every service of the path, and its builder takes {@code
 * max-attempts}, {@code retry-budget.*} and {@code failure-status-codes} for all of them at once:
 * so each service's value meets the builder's own check (a rejected one names its property), and
 * then every service must resolve to the same value, else startup fails naming the property and both
 * values. {@code hedging} and {@code affinity-header} are not applied by this path (the adapter has
 * neither yet): a service that sets them is logged at startup, and the OkHttp path still uses them.
 */
final class HttpClient5Settings {
  private static final Log LOG = LogFactory.getLog(HttpClient5Settings.class);
  static final String ENABLED = "fairway.httpclient5.enabled";
  private static final int DEFAULT_MAX_ATTEMPTS = 3; // FairwayHttpClient5.Builder's
  private static final double DEFAULT_RETRY_PERCENT = 0.2;
  private static final int DEFAULT_RETRY_MIN_PER_SECOND = 10;

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
      notApplied(s);
    }
    ServiceSettings first = services.values().iterator().next();
    Integer attempts = same(services, s -> s.maxAttempts, DEFAULT_MAX_ATTEMPTS);
    Double percent = same(services, s -> s.retryPercent, DEFAULT_RETRY_PERCENT);
    Integer perSecond = same(services, s -> s.retryMinPerSecond, DEFAULT_RETRY_MIN_PER_SECOND);
    sameCodes(services);

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

  /** Settings this path does not apply: said once at startup, so nobody believes they are in force here. */
  private static void notApplied(ServiceSettings s) {
    String hedging = s.hedging.value();
    if (hedging != null && !hedging.equals("off")) {
      LOG.warn("Fairway: " + s.hedging.property() + "=" + hedging + " is not applied by the Apache HttpClient 5 path"
          + " (it does not hedge yet); the OkHttp path applies it");
    }
    if (s.affinityHeader != null) {
      LOG.warn("Fairway: the affinity-header of " + s.service + " (" + s.affinityHeader + ") is not applied by the"
          + " Apache HttpClient 5 path (its picks carry no affinity key yet); the OkHttp path and Spring Cloud"
          + " LoadBalancer apply it");
    }
  }

  /**
   * The value every service resolves {@code setting} to (null: unset everywhere, the adapter's
   * default); throws naming the property of a service that differs from the first one.
   */
  private static <T> @Nullable T same(Map<String, ServiceSettings> services,
      Function<ServiceSettings, ServiceSettings.Value<T>> setting, T defaultValue) {
    ServiceSettings.Value<T> reference = null;
    for (ServiceSettings s : services.values()) {
      ServiceSettings.Value<T> v = setting.apply(s);
      if (reference == null) {
        reference = v;
        continue;
      }
      T expected = reference.value() != null ? reference.value() : defaultValue;
      T actual = v.value() != null ? v.value() : defaultValue;
      if (!Objects.equals(expected, actual)) {
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

  private static String codes(@Nullable List<Integer> set, int[] resolved) {
    String list = Arrays.toString(resolved).replaceAll("[\\[\\] ]", "");
    return set == null ? list + " (the default)" : list;
  }

  private static String describe(@Nullable Object value, Object defaultValue) {
    return value == null ? defaultValue + " (the default)" : String.valueOf(value);
  }

  /**
   * The message for two services that differ: it names the one that sets its value (the later one
   * when both do), with the other one's property and value as the expected.
   */
  private static FairwayConfigurationException differs(ServiceSettings.Value<?> first, String firstValue,
      ServiceSettings.Value<?> later, String laterValue) {
    boolean blameFirst = later.value() == null && first.value() != null;
    ServiceSettings.Value<?> named = blameFirst ? first : later;
    ServiceSettings.Value<?> other = blameFirst ? later : first;
    String namedValue = blameFirst ? firstValue : laterValue;
    String otherValue = blameFirst ? laterValue : firstValue;
    return new FairwayConfigurationException(named.property(), named.property() + ": " + namedValue
        + " (expected: " + otherValue + ", as " + other.property() + ": the Apache HttpClient 5 path applies one"
        + " value to every service, see " + ENABLED + ")");
  }
}
