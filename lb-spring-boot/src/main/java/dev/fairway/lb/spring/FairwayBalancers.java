package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.jspecify.annotations.Nullable;

/**
 * The Fairway balancers this application runs, by name: {@code orders} for the balancer behind
 * Spring Cloud LoadBalancer's {@code orders} client, {@code okhttp:orders} for the OkHttp path's.
 * The {@code fairway} actuator endpoint lists them; code can read {@link LoadBalancer#status()}
 * from them too. A balancer joins when it is created (at startup for every service under
 * {@code fairway.services}, else when Spring Cloud LoadBalancer creates the client's context on its
 * first call) and leaves when it is closed. Thread-safe.
 */
public final class FairwayBalancers {
  private final ConcurrentSkipListMap<String, LoadBalancer> balancers = new ConcurrentSkipListMap<>();
  private final ConcurrentHashMap<LoadBalancer, InstanceTargets> discovery = new ConcurrentHashMap<>();

  FairwayBalancers() {}

  /** Every running balancer by name, sorted by name: a snapshot. */
  public Map<String, LoadBalancer> balancers() {
    return new LinkedHashMap<>(balancers);
  }

  void register(String name, LoadBalancer balancer, @Nullable InstanceTargets instances) {
    if (instances != null) {
      discovery.put(balancer, instances);
    }
    balancers.put(name, balancer);
  }

  void unregister(String name, LoadBalancer balancer) {
    balancers.remove(name, balancer);
    discovery.remove(balancer);
  }

  /** What feeds {@code balancer} its instances, for the endpoint's view of discovery; null if unknown. */
  @Nullable InstanceTargets instancesOf(LoadBalancer balancer) {
    return discovery.get(balancer);
  }
}
