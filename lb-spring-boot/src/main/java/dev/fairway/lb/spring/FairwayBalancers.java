package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.jspecify.annotations.Nullable;

/**
 * The Fairway balancers this application runs, by name: {@code orders} for the balancer behind
 * Spring Cloud LoadBalancer's {@code orders} client, {@code okhttp:orders} for the OkHttp path's,
 * {@code httpclient5:orders} for the Apache HttpClient 5 path's.
 * The {@code fairway} actuator endpoint lists them; code can read {@link LoadBalancer#status()}
 * from them too. A balancer joins when it is created (at startup for every service under
 * {@code fairway.services}, else when Spring Cloud LoadBalancer creates the client's context on its
 * first call) and leaves when it is closed. Thread-safe.
 */
public final class FairwayBalancers {
  private final ConcurrentSkipListMap<String, LoadBalancer> balancers = new ConcurrentSkipListMap<>();
  private final ConcurrentHashMap<LoadBalancer, InstanceTargets> discovery = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Prepared> prepared = new ConcurrentHashMap<>();

  /**
   * A balancer built at startup for a service whose Spring Cloud LoadBalancer client does not exist
   * yet, with what feeds it: Spring's discovery ({@code instances}) or Fairway's own watcher
   * ({@code feed}); exactly one of the two is set.
   */
  record Prepared(LoadBalancer balancer, @Nullable InstanceTargets instances, @Nullable ServiceFeed feed) {
    /** Unlists and closes the balancer and its feed (a claimer that cannot use it, or shutdown). */
    void close(FairwayBalancers registry, String name) {
      registry.unregister(name, balancer);
      balancer.close();
      if (feed != null) {
        feed.close();
      }
    }
  }

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

  /** Lists a balancer built ahead of its client, for {@link #claim} by the client when it is created. */
  void prepare(String name, LoadBalancer balancer, InstanceTargets instances) {
    prepared.put(name, new Prepared(balancer, instances, null));
    register(name, balancer, instances);
  }

  /** Lists a balancer built ahead of its client on a feed (Fairway's own watcher), for {@link #claim}. */
  void prepare(String name, LoadBalancer balancer, ServiceFeed feed) {
    prepared.put(name, new Prepared(balancer, null, feed));
    register(name, balancer, null);
  }

  /** The balancer prepared for {@code name}, handed over once (its claimer then owns and closes it); null if none. */
  @Nullable Prepared claim(String name) {
    return prepared.remove(name);
  }

  /** Closes the prepared balancers that no client claimed (the application is stopping). */
  void closeUnclaimed() {
    for (String name : prepared.keySet()) {
      Prepared p = prepared.remove(name);
      if (p != null) {
        p.close(this, name);
      }
    }
  }

  /** What feeds {@code balancer} its instances, for the endpoint's view of discovery; null if unknown. */
  @Nullable InstanceTargets instancesOf(LoadBalancer balancer) {
    return discovery.get(balancer);
  }
}
