package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import okhttp3.OkHttpClient;
import okhttp3.Interceptor;
import org.jspecify.annotations.Nullable;
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
 * balancer's own, between reads too. The Apache HttpClient 5 path builds its balancers the same
 * way ({@link PathBalancers}).
 *
 * <p>{@link #close()} (the bean's destroy method) stops the reads, closes the balancers, and shuts
 * the OkHttpClient built here down: its dispatcher's executor and its connection pool. Thread-safe.
 */
public final class FairwayOkHttp implements AutoCloseable {
  private static final PathBalancers.Naming NAMING =
      new PathBalancers.Naming("the OkHttp path", "okhttp:", "fairway-okhttp-discovery", false);

  private final PathBalancers paths;
  private final List<Interceptor> interceptors = new ArrayList<>();
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
    PathBalancers.checkRefreshInterval("fairway.okhttp.refresh-interval", refreshInterval);
    // Every service's interceptor settings first: a bad value fails before any thread or balancer exists.
    Map<String, LoadBalancingInterceptor.Builder> builders = new LinkedHashMap<>();
    settings.named().forEach((service, s) -> builders.put(service, OkHttpSettings.interceptorFor(s)));
    this.paths = new PathBalancers(NAMING, settings, discovery, feed, registry, meters, refreshInterval);
    // PathBalancers built one balancer per service under fairway.services, as builders has one builder.
    builders.forEach((service, b) -> interceptors.add(
        b.service(service, Objects.requireNonNull(paths.balancers().get(service), service)).build()));
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
    return Map.copyOf(paths.balancers());
  }

  @Override
  public void close() {
    OkHttpClient c = client;
    if (c != null) {
      c.dispatcher().executorService().shutdown();
      c.connectionPool().evictAll();
    }
    paths.close();
  }
}
