package dev.fairway.lb.spring;

import dev.fairway.lb.ActiveHealth;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import dev.fairway.lb.internal.OutcomeRule;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;

/**
 * One service's validated settings: {@code fairway.services.<id>.*} over {@code fairway.default.*}
 * over the SDK's defaults. Built (and so checked) at startup; {@link #configure} then applies them to
 * a new {@link LoadBalancer.Builder} for each balancer of the service. Immutable.
 */
final class ServiceSettings {
  static final int[] DEFAULT_FAILURE_STATUS_CODES = OutcomeRule.defaultFailureStatusCodes();
  static final int DEFAULT_SOFT_LIMIT = 8; // Strategy.named("concurrency-limited")'s
  static final int DEFAULT_HARD_LIMIT = 16;
  static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(10);
  static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofSeconds(1); // ActiveHealth's

  final String service;
  final @Nullable Strategy strategy;
  final @Nullable Duration slowStart;
  final @Nullable Integer panicThreshold;
  final @Nullable Integer targetMeterLimit;
  final String localZone;
  final PassiveHealth passiveHealth;
  final int[] failureStatusCodes;
  /** {@code failure-status-codes} as set (value null when unset everywhere), and the property it came from. */
  final Value<List<Integer>> failureStatusCodesSetting;
  final @Nullable String affinityHeader;
  /** {@code affinity-header} as set (value null when unset everywhere), and the property it came from. */
  final Value<String> affinityHeaderSetting;
  final @Nullable ActiveHealth activeHealth;
  // The client paths' knobs, checked by OkHttpSettings / HttpClient5Settings when that path is on
  // (lb-okhttp, lb-apache-httpclient5 may be absent).
  final Value<String> hedging;
  final Value<Integer> maxAttempts;
  final Value<Double> retryPercent;
  final Value<Integer> retryMinPerSecond;
  /** {@code subset.size} and {@code .floor}: checked, applied by a discovery that can place this application. */
  final Value<Integer> subsetSize;
  final Value<Integer> subsetFloor;
  /** hedging.loser-hold, range-checked here (lb-okhttp may be absent); null value when unset. */
  final Value<Duration> loserHold;

  /**
   * Reads a property that the bound {@link FairwayProperties} cannot carry: {@code hedging} is a
   * single value, so {@code hedging.loser-hold} beside it is read from the environment by name.
   */
  @FunctionalInterface
  interface RawProperties {
    @Nullable String get(String name);

    RawProperties NONE = name -> null;
  }

  /** A resolved setting and the property it came from (for messages); value null when unset everywhere. */
  record Value<T>(@Nullable T value, String property) {}

  private ServiceSettings(String service, FairwayProperties.Service own, FairwayProperties.@Nullable Service defaults,
      String prefix, String cloudZone, RawProperties raw) {
    this.service = service;
    Resolver r = new Resolver(own, defaults, prefix);
    Value<String> strategyName = r.get(FairwayProperties.Service::getStrategy, "strategy");
    String named = strategyName.value();
    Strategy chosen = named == null ? null : check(strategyName.property(), () -> Strategy.named(named));
    this.strategy = concurrencyLimits(r, prefix, strategyName, chosen);
    Value<Duration> slow = r.get(FairwayProperties.Service::getSlowStart, "slow-start");
    Value<Integer> panic = r.get(FairwayProperties.Service::getPanicThreshold, "panic-threshold");
    Value<String> zone = r.get(FairwayProperties.Service::getLocalZone, "local-zone");
    this.slowStart = slow.value();
    this.panicThreshold = panic.value();
    Value<Integer> meterLimit = r.get(FairwayProperties.Service::getTargetMeterLimit, "target-meter-limit");
    this.targetMeterLimit = meterLimit.value();
    this.localZone = zone.value() != null ? zone.value() : cloudZone;
    // Each value through the builder's own check, so the message is the SDK's, with the property's name.
    LoadBalancer.Builder probe = LoadBalancer.builder(service);
    if (slowStart != null) {
      check(slow.property(), () -> probe.slowStart(slowStart));
    }
    if (panicThreshold != null) {
      check(panic.property(), () -> probe.panicThreshold(panicThreshold));
    }
    if (targetMeterLimit != null) {
      check(meterLimit.property(), () -> probe.targetMeterLimit(targetMeterLimit));
    }
    check(zone.value() != null ? zone.property() : "spring.cloud.loadbalancer.zone", () -> probe.localZone(localZone));

    Value<Boolean> enabled = r.get(s -> s.getPassiveHealth().getEnabled(), "passive-health.enabled");
    Value<Integer> consecutive = r.get(s -> s.getPassiveHealth().getConsecutiveFailures(),
        "passive-health.consecutive-failures");
    Value<Integer> maxEjection = r.get(s -> s.getPassiveHealth().getMaxEjectionPercent(),
        "passive-health.max-ejection-percent");
    Value<Duration> ejectionTime = r.get(s -> s.getPassiveHealth().getEjectionTime(), "passive-health.ejection-time");
    PassiveHealth health;
    if (Boolean.FALSE.equals(enabled.value())) {
      health = PassiveHealth.disabled();
      if (consecutive.value() != null || maxEjection.value() != null || ejectionTime.value() != null) {
        String set = consecutive.value() != null ? consecutive.property()
            : maxEjection.value() != null ? maxEjection.property() : ejectionTime.property();
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
      Duration time = ejectionTime.value();
      if (time != null) {
        PassiveHealth h = health;
        health = check(ejectionTime.property(), () -> h.withEjectionTime(time));
      }
    }
    this.passiveHealth = health;

    Value<List<Integer>> codes = r.get(FairwayProperties.Service::getFailureStatusCodes, "failure-status-codes");
    this.failureStatusCodes = codes.value() == null ? DEFAULT_FAILURE_STATUS_CODES : checkCodes(codes);
    this.failureStatusCodesSetting = codes;
    Value<String> header = r.get(FairwayProperties.Service::getAffinityHeader, "affinity-header");
    if (header.value() != null && !isToken(header.value())) {
      throw new FairwayConfigurationException(header.property(),
          header.property() + ": \"" + header.value() + "\" (expected: an HTTP header name)");
    }
    this.affinityHeader = header.value();
    this.affinityHeaderSetting = header;
    this.activeHealth = activeHealth(r);
    this.hedging = r.get(FairwayProperties.Service::getHedging, "hedging");
    this.maxAttempts = r.get(FairwayProperties.Service::getMaxAttempts, "max-attempts");
    this.retryPercent = r.get(s -> s.getRetryBudget().getPercent(), "retry-budget.percent");
    this.retryMinPerSecond = r.get(s -> s.getRetryBudget().getMinPerSecond(), "retry-budget.min-per-second");
    this.subsetSize = r.get(s -> s.getSubset().getSize(), "subset.size");
    this.subsetFloor = r.get(s -> s.getSubset().getFloor(), "subset.floor");
    this.loserHold = loserHold(raw, prefix, defaults != null);
    subset(PeerCoordinate.fixed(0, 1)); // checks both values now, with the SDK's own messages
  }

  /**
   * The strategy with concurrency-limit.soft / .hard applied. Limits set at this level with another
   * strategy are rejected; limits inherited from fairway.default apply only where the strategy is
   * concurrency-limited.
   */
  private static @Nullable Strategy concurrencyLimits(Resolver r, String prefix, Value<String> strategyName,
      @Nullable Strategy chosen) {
    Value<Integer> soft = r.get(s -> s.getConcurrencyLimit().getSoft(), "concurrency-limit.soft");
    Value<Integer> hard = r.get(s -> s.getConcurrencyLimit().getHard(), "concurrency-limit.hard");
    boolean limited = chosen != null && chosen.name().equals("concurrency-limited");
    if (!limited) {
      for (Value<Integer> limit : List.of(soft, hard)) {
        if (limit.value() != null && limit.property().startsWith(prefix)) {
          throw new FairwayConfigurationException(limit.property(), limit.property() + ": set while "
              + strategyName.property() + " is " + (chosen == null ? "not set (least-queueing)" : chosen.name())
              + " (expected: strategy concurrency-limited)");
        }
      }
      return chosen;
    }
    if (soft.value() == null && hard.value() == null) {
      return chosen;
    }
    int softLimit = soft.value() != null ? soft.value() : DEFAULT_SOFT_LIMIT;
    int hardLimit = hard.value() != null ? hard.value() : Math.max(DEFAULT_HARD_LIMIT, softLimit);
    try {
      return Strategy.concurrencyLimited(softLimit, hardLimit);
    } catch (IllegalArgumentException e) {
      String message = String.valueOf(e.getMessage());
      throw FairwayConfigurationException.of(message.startsWith("softLimit") ? soft.property() : hard.property(), e);
    }
  }

  /** Active health from active-health.*: null without a path; interval and timeout checked by ActiveHealth. */
  private static @Nullable ActiveHealth activeHealth(Resolver r) {
    Value<String> path = r.get(s -> s.getActiveHealth().getPath(), "active-health.path");
    Value<Duration> interval = r.get(s -> s.getActiveHealth().getInterval(), "active-health.interval");
    Value<Duration> timeout = r.get(s -> s.getActiveHealth().getTimeout(), "active-health.timeout");
    String p = path.value();
    if (p == null) {
      for (Value<Duration> knob : List.of(interval, timeout)) {
        if (knob.value() != null) {
          throw new FairwayConfigurationException(knob.property(), knob.property() + ": set while "
              + path.property() + " is not (expected: a path such as /actuator/health, or neither)");
        }
      }
      return null;
    }
    JdkHttpHealthProbe unlimited = check(path.property(), () -> JdkHttpHealthProbe.get(p));
    Duration every = interval.value() != null ? interval.value() : DEFAULT_PROBE_INTERVAL;
    ActiveHealth checked = check(interval.property(), () -> ActiveHealth.of(unlimited, every));
    Duration limit = timeout.value();
    if (limit != null) {
      check(timeout.property(), () -> checked.withTimeout(limit));
    }
    // The probe's own connect and read timeouts end a check that ActiveHealth stops waiting for.
    Duration probeTimeout = limit != null ? limit : DEFAULT_PROBE_TIMEOUT;
    ActiveHealth health = ActiveHealth.of(unlimited.withTimeout(probeTimeout), every);
    return limit != null ? health.withTimeout(limit) : health;
  }

  /** hedging.loser-hold: this service's, else fairway.default's; parsed as Boot parses durations, 0..10m. */
  private static Value<Duration> loserHold(RawProperties raw, String prefix, boolean inheritsDefaults) {
    String property = prefix + "hedging.loser-hold";
    String text = raw.get(property);
    if (text == null && inheritsDefaults) {
      property = "fairway.default.hedging.loser-hold";
      text = raw.get(property);
    }
    if (text == null) {
      return new Value<>(null, property);
    }
    Duration hold;
    try {
      hold = DurationStyle.detectAndParse(text.trim());
    } catch (IllegalArgumentException e) {
      throw new FairwayConfigurationException(property, property + ": \"" + text + "\" (expected: a duration such as 10s)");
    }
    if (hold.isNegative() || hold.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new FairwayConfigurationException(property, property + ": " + text.trim() + " (expected: 0s..10m)");
    }
    return new Value<>(hold, property);
  }

  /** The settings of a service listed under {@code fairway.services}. */
  static ServiceSettings of(String service, FairwayProperties.Service own, FairwayProperties.Service defaults,
      String cloudZone, RawProperties raw) {
    return new ServiceSettings(service, own, defaults, "fairway.services." + service + ".", cloudZone, raw);
  }

  /** The settings of any other service: {@code fairway.default.*} alone. */
  static ServiceSettings ofDefaults(String service, FairwayProperties.Service defaults, String cloudZone,
      RawProperties raw) {
    return new ServiceSettings(service, defaults, null, "fairway.default.", cloudZone, raw);
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
    if (targetMeterLimit != null) {
      b.targetMeterLimit(targetMeterLimit);
    }
    if (activeHealth != null) {
      b.activeHealth(activeHealth);
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
      T inherited = getter.apply(defaults);
      // Unset everywhere: named as this service's own property, the one a message would ask to set.
      return new Value<>(inherited, inherited != null ? "fairway.default." + name : prefix + name);
    }
  }
}
