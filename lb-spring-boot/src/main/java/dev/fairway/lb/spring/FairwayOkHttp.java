package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
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
import okhttp3.OkHttpClient;
import okhttp3.Interceptor;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * The OkHttp path ({@code fairway.okhttp.enabled=true}): for each service under
 * {@code fairway.services}, a Fairway {@link LoadBalancer} (registered as {@code okhttp:<id>}) over
 * the instances the {@link DiscoveryClient} lists, and a {@link LoadBalancingInterceptor} with the
 * service's OkHttp settings (hedging, attempts, retry budget), for Retrofit users and for hedging,
 * which Spring Cloud LoadBalancer cannot do.
 *
 * <p>With {@code fairway.consul.enabled=true}, every service's balancer is fed by Fairway's own
 * Consul watcher instead (a {@link TargetFeed}): changes arrive as Consul reports them, and the
 * {@code DiscoveryClient} is not read.
 *
 * <p>Otherwise instances are read once at startup (waiting at most 10 s) and then every
 * {@code fairway.okhttp.refresh-interval} (default 30 s) on one daemon thread; bad entries are
 * skipped as {@link InstanceTargets} says, and a failed read keeps the last list. Health is the
 * balancer's own, between reads too.
 *
 * <p>{@link #close()} (the bean's destroy method) stops the reads, closes the balancers, and shuts
 * the OkHttpClient built here down: its dispatcher's executor and its connection pool. Thread-safe.
 */
public final class FairwayOkHttp implements AutoCloseable {
  private static final Log LOG = LogFactory.getLog(FairwayOkHttp.class);
  private static final Duration FIRST_READ_TIMEOUT = Duration.ofSeconds(10);

  private final DiscoveryClient discovery;
  private final FairwayBalancers registry;
  private final Map<String, InstanceTargets> targets = new LinkedHashMap<>();
  private final Map<String, LoadBalancer> balancers = new LinkedHashMap<>();
  private final List<Interceptor> interceptors = new ArrayList<>();
  private final List<ServiceFeed> feeds = new ArrayList<>();
  private final ScheduledExecutorService refresher;
  private volatile @Nullable OkHttpClient client;

  FairwayOkHttp(FairwaySettings settings, DiscoveryClient discovery, FairwayBalancers registry,
      @Nullable MeterRegistry meters, Duration refreshInterval) {
    this(settings, discovery, null, registry, meters, refreshInterval);
  }

  /**
   * With a {@code feed} (fairway.consul.enabled), every service's balancer is fed by it and the
   * {@code discovery} is not read; startup waits for the feed's first answers, all services at once,
   * up to {@link TargetFeed#firstReplyTimeout()}.
   */
  FairwayOkHttp(FairwaySettings settings, DiscoveryClient discovery, @Nullable TargetFeed feed,
      FairwayBalancers registry, @Nullable MeterRegistry meters, Duration refreshInterval) {
    if (refreshInterval.compareTo(Duration.ofMillis(10)) < 0) {
      String property = "fairway.okhttp.refresh-interval";
      throw new FairwayConfigurationException(property, property + ": " + refreshInterval + " (expected: at least 10ms)");
    }
    this.discovery = discovery;
    this.registry = registry;
    // Every service's interceptor settings first: a bad value fails before any thread or balancer exists.
    Map<String, LoadBalancingInterceptor.Builder> builders = new LinkedHashMap<>();
    settings.named().forEach((service, s) -> builders.put(service, OkHttpSettings.interceptorFor(s)));
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
      Thread t = new Thread(r, "fairway-okhttp-discovery");
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
      LOG.warn("Fairway: discovery did not answer within " + firstTimeout + "; the OkHttp path starts without instances");
    } catch (ExecutionException e) {
      LOG.warn("Fairway: the first discovery read failed; the OkHttp path starts without instances", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    builders.forEach((service, b) -> {
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
      LoadBalancer balancer = lb.build();
      balancers.put(service, balancer);
      registry.register("okhttp:" + service, balancer, t);
      interceptors.add(b.service(service, balancer).build());
    });
    if (feed == null) {
      long every = refreshInterval.toMillis();
      // refresh() catches what a read throws, so the schedule never dies of one and nothing is lost here.
      var unused = refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.MILLISECONDS);
    }
  }

  /** Reads every service's instances once; a failing read keeps that service's last list. */
  private void refresh() {
    targets.forEach((service, t) -> {
      try {
        List<ServiceInstance> instances = discovery.getInstances(service);
        MutableTargetSource created = t.update(instances == null ? List.of() : List.copyOf(instances));
        if (created != null) {
          LOG.debug("Fairway: first instances of " + service + " for the OkHttp path: " + created.targets());
        }
      } catch (RuntimeException e) {
        LOG.warn("Fairway: reading the instances of " + service + " failed; keeping the last list", e);
      }
    });
  }

  /** Adds the interceptors, one per service under fairway.services, to {@code builder}: for an OkHttpClient of your own. */
  public OkHttpClient.Builder configure(OkHttpClient.Builder builder) {
    for (Interceptor i : interceptors) {
      builder.addInterceptor(i);
    }
    return builder;
  }

  /** The OkHttpClient of this path: built once, shut down by {@link #close()}. */
  public OkHttpClient client() {
    OkHttpClient c = client;
    if (c == null) {
      synchronized (this) {
        c = client;
        if (c == null) {
          c = configure(new OkHttpClient.Builder()).build();
          client = c;
        }
      }
    }
    return c;
  }

  /** This path's balancers by service id. */
  public Map<String, LoadBalancer> balancers() {
    return Map.copyOf(balancers);
  }

  @Override
  public void close() {
    refresher.shutdownNow();
    try {
      if (!refresher.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("Fairway: the OkHttp discovery thread did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    OkHttpClient c = client;
    if (c != null) {
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    balancers.forEach((service, lb) -> {
      registry.unregister("okhttp:" + service, lb);
      lb.close();
    });
    feeds.forEach(ServiceFeed::close);
  }
}
