package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * The Apache HttpClient 5 path ({@code fairway.httpclient5.enabled=true}): for each service under
 * {@code fairway.services}, a Fairway {@link LoadBalancer} (registered as {@code httpclient5:<id>},
 * and so tagged {@code balancer=httpclient5:<id>} on its meters) over the instances the {@link
 * DiscoveryClient} lists, or over Fairway's own watcher ({@link TargetFeed}) when one is on, read as
 * the OkHttp path reads them ({@link PathBalancers}, every {@code fairway.httpclient5.refresh-interval}).
 * One {@link FairwayHttpClient5} balances all of them; the starter puts it into every Apache
 * HttpClient 5 {@code ClientHttpRequestFactoryBuilder} of the application, so the {@code
 * RestClient.Builder} and {@code RestTemplateBuilder} Boot provides send {@code http://orders/...}
 * through it.
 *
 * <p>That one adapter applies {@code max-attempts}, {@code retry-budget.*}, {@code
 * failure-status-codes}, {@code affinity-header} and {@code hedging} (with {@code
 * hedging.loser-hold}) to every service: they must be the same for all of them ({@link
 * HttpClient5Settings}), else startup fails naming the property and both values. Hedging applies to
 * the classic HttpClient under Boot's {@code RestClient} and {@code RestTemplate} (and to those
 * built with {@link #configure(HttpClientBuilder)}) as to the async clients built with {@link
 * #configure(HttpAsyncClientBuilder)}: a GET, HEAD or OPTIONS without an entity whose first copy
 * has no answer after the policy's delay gets a second copy to another instance ({@link
 * FairwayHttpClient5}).
 *
 * <p>{@link #close()} (the bean's destroy method) stops the reads and closes the balancers; the
 * HttpClients built with {@link #configure} are their owners' to close. Thread-safe.
 */
public final class FairwayHttpClient5Path implements AutoCloseable {
  private static final PathBalancers.Naming NAMING =
      new PathBalancers.Naming("the Apache HttpClient 5 path", "httpclient5:", "fairway-httpclient5-discovery", true);
  static final String REFRESH_INTERVAL = "fairway.httpclient5.refresh-interval";

  private final PathBalancers paths;
  private final FairwayHttpClient5 adapter;

  /**
   * With a {@code feed} (fairway.consul / kubernetes / dns.enabled), every service's balancer is fed
   * by it and {@code discovery} may be null; without one, {@code discovery} is read.
   *
   * @throws FairwayConfigurationException naming the property for a setting this path rejects
   */
  FairwayHttpClient5Path(FairwaySettings settings, @Nullable DiscoveryClient discovery, @Nullable TargetFeed feed,
      FairwayBalancers registry, @Nullable MeterRegistry meters, Duration refreshInterval) {
    PathBalancers.checkRefreshInterval(REFRESH_INTERVAL, refreshInterval);
    // Every setting first: a bad value fails before any thread or balancer exists.
    FairwayHttpClient5.Builder builder = HttpClient5Settings.builderFor(settings.named());
    if (discovery == null && feed == null) {
      throw new FairwayConfigurationException(HttpClient5Settings.ENABLED, HttpClient5Settings.ENABLED
          + ": true without a DiscoveryClient (expected: Spring Cloud discovery, or one of "
          + String.join(", ", TargetFeed.ENABLED) + " set to true, to list each service's instances)");
    }
    this.paths = new PathBalancers(NAMING, settings, discovery, feed, registry, meters, refreshInterval);
    String service = "";
    try {
      for (Map.Entry<String, LoadBalancer> e : paths.balancers().entrySet()) {
        service = e.getKey();
        builder.service(service, e.getValue());
      }
      this.adapter = builder.build();
    } catch (IllegalArgumentException e) {
      paths.close();
      // A service id HttpClient cannot take as a request's host (the adapter's other checks passed above).
      throw FairwayConfigurationException.of("fairway.services." + service, e);
    }
  }

  /**
   * Adds Fairway's exec chain element to {@code builder} and sets its retry strategy, as {@link
   * FairwayHttpClient5#customize(HttpClientBuilder)} says: for an HttpClient of your own. Returns
   * {@code builder}. The client hedges as the services' {@code hedging} says: a GET, HEAD or
   * OPTIONS without an entity whose first copy has no answer after the policy's delay gets a second
   * copy to another instance, sent from the shared hedge pool while the caller's thread waits on the
   * first; the first usable answer wins and the other copy's connection is closed.
   */
  public HttpClientBuilder configure(HttpClientBuilder builder) {
    return adapter.customize(builder);
  }

  /**
   * As {@link #configure(HttpClientBuilder)}, for an async client ({@link
   * FairwayHttpClient5#customize(HttpAsyncClientBuilder)}), which hedges as the classic one does.
   * Returns {@code builder}.
   */
  public HttpAsyncClientBuilder configure(HttpAsyncClientBuilder builder) {
    return adapter.customize(builder);
  }

  /** This path's balancers by service id. */
  public Map<String, LoadBalancer> balancers() {
    return Map.copyOf(paths.balancers());
  }

  @Override
  public void close() {
    paths.close();
  }

  @Override
  public String toString() {
    return "FairwayHttpClient5Path{" + adapter + "}";
  }
}
