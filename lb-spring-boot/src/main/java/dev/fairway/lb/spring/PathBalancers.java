package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * The balancers of one client path of the starter (the OkHttp path, the Apache HttpClient 5 path):
 * one Fairway {@link LoadBalancer} per service under {@code fairway.services}, registered in
 * {@link FairwayBalancers} as {@code <prefix><id>}, fed by the {@link TargetFeed} when there is one
 * (Fairway's own watcher) or else by the {@link DiscoveryClient}.
 *
 * <p>With a feed, startup waits for the feed's first answers, all services at once, up to {@link
 * TargetFeed#firstReplyTimeout()}. Without one, instances are read once at startup (waiting at most
 * 10 s) and then every refresh interval on one daemon thread; bad entries are skipped as {@link
 * InstanceTargets} says, and a failed read keeps the last list. Health is the balancer's own,
 * between reads too.
 *
 * <p>{@link #close()} stops the reads, unlists and closes the balancers and closes the feeds.
 * Thread-safe.
 */
final class PathBalancers implements AutoCloseable {
  private static final Log LOG = LogFactory.getLog(PathBalancers.class);
  private static final Duration FIRST_READ_TIMEOUT = Duration.ofSeconds(10);

  private final String path;
  private final String prefix;
  private final @Nullable DiscoveryClient discovery;
  private final FairwayBalancers registry;
  private final Map<String, InstanceTargets> targets = new LinkedHashMap<>();
  private final Map<String, LoadBalancer> balancers = new LinkedHashMap<>();
  private final List<ServiceFeed> feeds = new ArrayList<>();
  private final ScheduledExecutorService refresher;

  /**
   * The path's naming: {@code path} for log messages ("the OkHttp path"), {@code prefix} before
   * each service id in {@link FairwayBalancers} ({@code okhttp:}), {@code thread} the refresh
   * thread's name. With {@code meterName} true each balancer's {@code balancer} meter tag is its
   * registered name ({@code <prefix><id>}); false leaves the builder's default (the service id).
   */
  record Naming(String path, String prefix, String thread, boolean meterName) {}

  /**
   * Builds and lists every service's balancer; {@code refreshInterval} must have passed {@link
   * #checkRefreshInterval}. {@code discovery} may be null only with a {@code feed}.
   */
  PathBalancers(Naming naming, FairwaySettings settings, @Nullable DiscoveryClient discovery, @Nullable TargetFeed feed,
      FairwayBalancers registry, @Nullable MeterRegistry meters, Duration refreshInterval) {
    this.path = naming.path();
    this.prefix = naming.prefix();
    if (feed == null && discovery == null) {
      throw new IllegalArgumentException("discovery: null (expected: a DiscoveryClient when there is no feed)");
    }
    this.discovery = discovery;
    this.registry = registry;
    Map<String, ServiceFeed> fed = new LinkedHashMap<>();
    if (feed != null) {
      try {
        settings.named().forEach((service, s) -> fed.put(service, feed.open(s)));
      } catch (RuntimeException e) {
        fed.values().forEach(ServiceFeed::close);
        throw e;
      }
      feeds.addAll(fed.values());
    } else {
      settings.named().keySet().forEach(service -> targets.put(service, new InstanceTargets(service, meters, System::nanoTime)));
    }
    this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, naming.thread());
      t.setDaemon(true);
      return t;
    });
    Future<?> first = feed != null
        ? CompletableFuture.allOf(fed.values().stream().map(ServiceFeed::whenReady).toArray(CompletableFuture<?>[]::new))
        : refresher.submit(this::refresh);
    Duration firstTimeout = feed != null ? feed.firstReplyTimeout() : FIRST_READ_TIMEOUT;
    try {
      first.get(firstTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      first.cancel(false);
      LOG.warn("Fairway: discovery did not answer within " + firstTimeout + "; " + path + " starts without instances");
    } catch (ExecutionException e) {
      LOG.warn("Fairway: the first discovery read failed; " + path + " starts without instances", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    settings.named().keySet().forEach(service -> {
      LoadBalancer.Builder lb = settings.forService(service).configure(LoadBalancer.builder(service));
      ServiceFeed f = fed.get(service);
      InstanceTargets t = targets.get(service);
      if (f != null) {
        f.apply(lb);
      } else {
        lb.targets(t != null ? t.sourceOrEmpty() : new MutableTargetSource(List.of()));
      }
      if (meters != null) {
        lb.meterRegistry(meters);
      }
      if (naming.meterName()) {
        lb.name(prefix + service);
      }
      LoadBalancer balancer = lb.build();
      balancers.put(service, balancer);
      registry.register(prefix + service, balancer, t);
    });
    if (feed == null) {
      long every = refreshInterval.toMillis();
      // refresh() catches what a read throws, so the schedule never dies of one and nothing is lost here.
      var unused = refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.MILLISECONDS);
    }
  }

  /** Rejects a refresh interval under 10 ms, naming {@code property} and the value. */
  static void checkRefreshInterval(String property, @Nullable Duration refreshInterval) {
    if (refreshInterval == null || refreshInterval.compareTo(Duration.ofMillis(10)) < 0) {
      throw new FairwayConfigurationException(property, property + ": " + refreshInterval + " (expected: at least 10ms)");
    }
  }

  /** Reads every service's instances once; a failing read keeps that service's last list. */
  private void refresh() {
    DiscoveryClient d = discovery;
    if (d == null) {
      return; // fed by a TargetFeed: nothing to read
    }
    targets.forEach((service, t) -> {
      try {
        List<ServiceInstance> instances = d.getInstances(service);
        MutableTargetSource created = t.update(instances == null ? List.of() : List.copyOf(instances));
        if (created != null) {
          LOG.debug("Fairway: first instances of " + service + " for " + path + ": " + created.targets());
        }
      } catch (RuntimeException e) {
        LOG.warn("Fairway: reading the instances of " + service + " failed; keeping the last list", e);
      }
    });
  }

  /** The balancers by service id, in the order of {@code fairway.services}; unmodifiable. */
  Map<String, LoadBalancer> balancers() {
    return Collections.unmodifiableMap(balancers);
  }

  @Override
  public void close() {
    refresher.shutdownNow();
    try {
      if (!refresher.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("Fairway: the discovery thread of " + path + " did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    balancers.forEach((service, lb) -> {
      registry.unregister(prefix + service, lb);
      lb.close();
    });
    feeds.forEach(ServiceFeed::close);
  }
}
