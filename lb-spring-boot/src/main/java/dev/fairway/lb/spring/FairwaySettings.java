package dev.fairway.lb.spring;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every service's validated settings. Built eagerly at startup from {@link FairwayProperties}, so a
 * bad value stops the application before any balancer exists; nothing starts half-configured.
 * Thread-safe.
 */
final class FairwaySettings {
  private final FairwayProperties.Service defaults;
  private final String cloudZone;
  private final ServiceSettings.RawProperties raw;
  private final Map<String, ServiceSettings> named; // fairway.services.*, never mutated
  private final ConcurrentHashMap<String, ServiceSettings> others = new ConcurrentHashMap<>();

  FairwaySettings(FairwayProperties properties, String cloudZone) {
    this(properties, cloudZone, ServiceSettings.RawProperties.NONE);
  }

  /** {@code raw} reads the properties the binding cannot carry ({@code hedging.loser-hold}): the Environment. */
  FairwaySettings(FairwayProperties properties, String cloudZone, ServiceSettings.RawProperties raw) {
    this.defaults = properties.getDefault();
    this.cloudZone = cloudZone;
    this.raw = raw;
    ServiceSettings.ofDefaults("default", defaults, cloudZone, raw); // checks fairway.default.* on its own
    Map<String, ServiceSettings> byName = new LinkedHashMap<>();
    properties.getServices().forEach((name, own) -> byName.put(name, ServiceSettings.of(name, own, defaults, cloudZone, raw)));
    // In the order bound (Map.copyOf's iteration order changes from one JVM to the next): which of
    // two services that differ the HttpClient 5 path's startup failure names may depend on it.
    this.named = Collections.unmodifiableMap(byName);
    java.time.Duration timeout = properties.getLoadbalancer().getAbandonedPickTimeout();
    if (timeout == null || timeout.compareTo(java.time.Duration.ofSeconds(1)) < 0) {
      String property = "fairway.loadbalancer.abandoned-pick-timeout";
      throw new FairwayConfigurationException(property, property + ": " + timeout + " (expected: at least 1s)");
    }
  }

  /** The settings of {@code service}: its own under fairway.services, else fairway.default's. */
  ServiceSettings forService(String service) {
    ServiceSettings s = named.get(service);
    return s != null ? s : others.computeIfAbsent(service, id -> ServiceSettings.ofDefaults(id, defaults, cloudZone, raw));
  }

  /** The services listed under fairway.services, in order. */
  Map<String, ServiceSettings> named() {
    return named;
  }
}
