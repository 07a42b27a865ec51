package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * The balancers of the services under {@code fairway.services}, built at startup so that each is in
 * {@code /actuator/fairway} before its first call. Spring Cloud LoadBalancer creates a client's
 * context (and with it the {@link FairwayReactorLoadBalancer}) only on the client's first call;
 * creating those contexts at startup would cost each one a child application context's start, so
 * the balancer is built here, in the application context, and the client takes it over when it is
 * created ({@link FairwayBalancers#claim}).
 *
 * <p>With {@code fairway.consul.enabled=true} each balancer is built on its {@link ServiceFeed}
 * (Fairway's own Consul watcher) instead, and nothing is read from the {@link DiscoveryClient}.
 *
 * <p>Once every singleton exists, one daemon thread ({@code fairway-first-instances}) reads each
 * service's instances from the {@link DiscoveryClient}, so the endpoint shows them before the first
 * call; from the first call on, the client's own instance list (Spring Cloud LoadBalancer's supplier
 * chain, with its cache and filters) feeds the balancer. A failed read is logged and leaves the
 * list empty until the first call. {@link #close} stops that thread and closes the balancers no
 * client took over. Thread-safe.
 */
final class FairwayPreparedBalancers implements SmartInitializingSingleton, AutoCloseable {
  private static final Log LOG = LogFactory.getLog(FairwayPreparedBalancers.class);

  private final FairwayBalancers registry;
  private final @Nullable DiscoveryClient discovery;
  private final Map<String, InstanceTargets> targets = new LinkedHashMap<>();
  private volatile @Nullable Thread reader;

  FairwayPreparedBalancers(FairwaySettings settings, FairwayBalancers registry, @Nullable MeterRegistry meters,
      @Nullable DiscoveryClient discovery, @Nullable TargetFeed feed) {
    this.registry = registry;
    this.discovery = discovery;
    try {
      settings.named().forEach((service, s) -> {
        if (feed != null) { // fairway.consul.enabled: the balancer reads Consul from the start
          ServiceFeed opened = feed.open(s);
          registry.prepare(service, FairwayReactorLoadBalancer.build(service, s, opened, meters), opened);
          return;
        }
        InstanceTargets t = new InstanceTargets(service, meters, System::nanoTime);
        LoadBalancer balancer = FairwayReactorLoadBalancer.build(service, s, t, meters);
        targets.put(service, t);
        registry.prepare(service, balancer, t);
      });
    } catch (RuntimeException e) {
      registry.closeUnclaimed(); // a bad setting stops startup: nothing opened so far stays open
      throw e;
    }
  }

  @Override
  public void afterSingletonsInstantiated() {
    DiscoveryClient d = discovery;
    if (d == null || targets.isEmpty()) {
      return;
    }
    Thread t = new Thread(() -> readOnce(d), "fairway-first-instances");
    t.setDaemon(true);
    reader = t;
    t.start();
  }

  private void readOnce(DiscoveryClient d) {
    targets.forEach((service, t) -> {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      try {
        List<ServiceInstance> instances = d.getInstances(service);
        t.update(instances == null ? List.of() : List.copyOf(instances));
      } catch (RuntimeException e) {
        LOG.warn("Fairway: reading the instances of " + service + " at startup failed; its first call reads them", e);
      }
    });
  }

  @Override
  public void close() {
    Thread t = reader;
    if (t != null) {
      t.interrupt();
    }
    registry.closeUnclaimed();
  }
}
