package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One service's validated settings: {@code fairway.services.<id>.*} over {@code fairway.default.*}
 * over the SDK's defaults. Built (and so checked) at startup; {@link #configure} then applies them to
 * a new {@link LoadBalancer.Builder} for each balancer of the service. Immutable.
 */
final class ServiceSettings {
  static final int[] DEFAULT_FAILURE_STATUS_CODES = {500, 502, 503, 504};

  final String service;
  final @Nullable Strategy strategy;
  final @Nullable Duration slowStart;
  final @Nullable Integer panicThreshold;
  final String localZone;
  final PassiveHealth passiveHealth;
  final int[] failureStatusCodes;
  final @Nullable String affinityHeader;
  // The OkHttp path's knobs, checked by OkHttpSettings when that path is on (lb-okhttp may be absent).
  final Value<String> hedging;
  final Value<Integer> maxAttempts;
  final Value<Double> retryPercent;
  final Value<Integer> retryMinPerSecond;
  /** {@code subset.size} and {@code .floor}: checked, applied by a discovery that can place this application. */
  final Value<Integer> subsetSize;
  final Value<Integer> subsetFloor;

  /** A resolved setting and the property it came from (for messages); value null when unset everywhere. */
  record Value<T>(@Nullable T value, String property) {}

  private ServiceSettings(String service, FairwayProperties.Service own, FairwayProperties.@Nullable Service defaults,
      String prefix, String cloudZone) {
    this.service = service;
    Resolver r = new Resolver(own, defaults, prefix);
    Value<String> strategyName = r.get(FairwayProperties.Service::getStrategy, "strategy");
    String named = strategyName.value();
    this.strategy = named == null ? null : check(strategyName.property(), () -> Strategy.named(named));
    Value<Duration> slow = r.get(FairwayProperties.Service::getSlowStart, "slow-start");
    Value<Integer> panic = r.get(FairwayProperties.Service::getPanicThreshold, "panic-threshold");
    Value<String> zone = r.get(FairwayProperties.Service::getLocalZone, "local-zone");
    this.slowStart = slow.value();
    this.panicThreshold = panic.value();
    this.localZone = zone.value() != null ? zone.value() : cloudZone;
    // Each value through the builder's own check, so the message is the SDK's, with the property's name.
    LoadBalancer.Builder probe = LoadBalancer.builder(service);
    if (slowStart != null) {
      check(slow.property(), () -> probe.slowStart(slowStart));
    }
    if (panicThreshold != null) {
      check(panic.property(), () -> probe.panicThreshold(panicThreshold));
    }
    check(zone.value() != null ? zone.property() : "spring.cloud.loadbalancer.zone", () -> probe.localZone(localZone));

    Value<Boolean> enabled = r.get(s -> s.getPassiveHealth().getEnabled(), "passive-health.enabled");
    Value<Integer> consecutive = r.get(s -> s.getPassiveHealth().getConsecutiveFailures(),
        "passive-health.consecutive-failures");
    Value<Integer> maxEjection = r.get(s -> s.getPassiveHealth().getMaxEjectionPercent(),
        "passive-health.max-ejection-percent");
    PassiveHealth health;
    if (Boolean.FALSE.equals(enabled.value())) {
      health = PassiveHealth.disabled();
      if (consecutive.value() != null || maxEjection.value() != null) {
        String set = consecutive.value() != null ? consecutive.property() : maxEjection.property();
        throw new FairwayConfigurationException(set, set + ": set while " + enabled.property()
            + " is false (expected: one or the other)");
      }
    } else {
      health = PassiveHealth.defaults();
      Integer failures = consecutive.value();
      if (failures != null) {
        PassiveHealth h = health;
        health = check(consecutive.property(), () -> h.withConsecutiveFailures(failures));
      }
      Integer percent = maxEjection.value();
      if (percent != null) {
        PassiveHealth h = health;
        health = check(maxEjection.property(), () -> h.withMaxEjectionPercent(percent));
      }
    }
    this.passiveHealth = health;

    Value<List<Integer>> codes = r.get(FairwayProperties.Service::getFailureStatusCodes, "failure-status-codes");
    this.failureStatusCodes = codes.value() == null ? DEFAULT_FAILURE_STATUS_CODES : checkCodes(codes);
    Value<String> header = r.get(FairwayProperties.Service::getAffinityHeader, "affinity-header");
    if (header.value() != null && !isToken(header.value())) {
      throw new FairwayConfigurationException(header.property(),
          header.property() + ": \"" + header.value() + "\" (expected: an HTTP header name)");
    }
    this.affinityHeader = header.value();
    this.hedging = r.get(FairwayProperties.Service::getHedging, "hedging");
    this.maxAttempts = r.get(FairwayProperties.Service::getMaxAttempts, "max-attempts");
    this.retryPercent = r.get(s -> s.getRetryBudget().getPercent(), "retry-budget.percent");
    this.retryMinPerSecond = r.get(s -> s.getRetryBudget().getMinPerSecond(), "retry-budget.min-per-second");
    this.subsetSize = r.get(s -> s.getSubset().getSize(), "subset.size");
    this.subsetFloor = r.get(s -> s.getSubset().getFloor(), "subset.floor");
    subset(PeerCoordinate.fixed(0, 1)); // checks both values now, with the SDK's own messages
  }

  /** The settings of a service listed under {@code fairway.services}. */
  static ServiceSettings of(String service, FairwayProperties.Service own, FairwayProperties.Service defaults,
      String cloudZone) {
    return new ServiceSettings(service, own, defaults, "fairway.services." + service + ".", cloudZone);
  }

  /** The settings of any other service: {@code fairway.default.*} alone. */
  static ServiceSettings ofDefaults(String service, FairwayProperties.Service defaults, String cloudZone) {
    return new ServiceSettings(service, defaults, null, "fairway.default.", cloudZone);
  }

  /** Applies these settings to a fresh builder (which must have none of them set). */
  LoadBalancer.Builder configure(LoadBalancer.Builder b) {
    if (strategy != null) {
      b.strategy(strategy);
    }
    if (slowStart != null) {
      b.slowStart(slowStart);
    }
    if (panicThreshold != null) {
      b.panicThreshold(panicThreshold);
    }
    return b.localZone(localZone).passiveHealth(passiveHealth);
  }

  /**
   * The subset of {@code subset.size} / {@code .floor} over {@code coordinate}, or null when this
   * service has no {@code subset.size}. Throws naming the property for a value {@link Subset} rejects.
   */
  @Nullable Subset subset(PeerCoordinate coordinate) {
    Integer size = subsetSize.value();
    Integer floor = subsetFloor.value();
    if (size == null) {
      if (floor != null) {
        String sizeProperty = subsetFloor.property().replace("subset.floor", "subset.size");
        throw new FairwayConfigurationException(subsetFloor.property(), subsetFloor.property() + ": " + floor
            + " set without " + sizeProperty + " (expected: both, or size alone)");
      }
      return null;
    }
    Subset subset = check(subsetSize.property(), () -> Subset.of(size, coordinate));
    return floor == null ? subset : check(subsetFloor.property(), () -> subset.withFloor(floor));
  }

  boolean isFailureStatus(int status) {
    for (int code : failureStatusCodes) {
      if (code == status) {
        return true;
      }
    }
    return false;
  }

  /** Runs one builder check; its IllegalArgumentException becomes a message naming the property. */
  static <T> T check(String property, java.util.function.Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException e) {
      throw FairwayConfigurationException.of(property, e);
    }
  }

  private static int[] checkCodes(Value<List<Integer>> codes) {
    List<Integer> list = codes.value();
    if (list == null) {
      return DEFAULT_FAILURE_STATUS_CODES;
    }
    int[] out = new int[list.size()];
    for (int i = 0; i < out.length; i++) {
      Integer code = list.get(i);
      if (code == null || code < 100 || code > 599) {
        throw new FairwayConfigurationException(codes.property(),
            codes.property() + ": " + code + " (expected: HTTP status codes 100..599, possibly none)");
      }
      out[i] = code;
    }
    return out;
  }

  private static boolean isToken(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return "ServiceSettings{" + service + ", strategy=" + (strategy == null ? "default" : strategy.name())
        + ", localZone=" + localZone + ", " + passiveHealth + ", failureStatusCodes="
        + Arrays.toString(failureStatusCodes) + "}";
  }

  /** Looks a setting up in the service's own properties, then in the defaults. */
  private static final class Resolver {
    private final FairwayProperties.Service own;
    private final FairwayProperties.@Nullable Service defaults;
    private final String prefix;

    Resolver(FairwayProperties.Service own, FairwayProperties.@Nullable Service defaults, String prefix) {
      this.own = own;
      this.defaults = defaults;
      this.prefix = prefix;
    }

    <T> Value<T> get(Function<FairwayProperties.Service, @Nullable T> getter, String name) {
      T value = getter.apply(own);
      if (value != null || defaults == null) {
        return new Value<>(value, prefix + name);
      }
      return new Value<>(getter.apply(defaults), "fairway.default." + name);
    }
  }
}
