package dev.fairway.lb.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fairway.*} properties. Every value is checked when the application starts, by the same
 * builders the SDK uses ({@code LoadBalancer.Builder}, {@code PassiveHealth},
 * {@code LoadBalancingInterceptor.Builder}); a bad one stops startup with a message naming the
 * property and the value, e.g. {@code fairway.services.orders.strategy: "fastest" (expected: one of
 * round-robin, ...)}.
 *
 * <pre>
 * fairway.default.strategy=least-queueing
 * fairway.services.orders.strategy=least-response-time
 * fairway.services.orders.slow-start=30s
 * fairway.services.orders.failure-status-codes=500,502,503,504
 * </pre>
 *
 * <p>A service without its own value for a setting takes {@code fairway.default}'s, and without
 * that, the SDK's default. Mutable, as Boot's binding needs; read once at startup.
 */
@ConfigurationProperties("fairway")
public class FairwayProperties {
  /** False turns the whole starter off. Default true. */
  private boolean enabled = true;

  /** Settings for every service that does not set its own. */
  private final Service defaults = new Service();

  /**
   * Settings per service id (the host name in http://orders/...), each over fairway.default's. A
   * service listed here has its balancer from startup on.
   */
  private final Map<String, Service> services = new LinkedHashMap<>();

  /** The Spring Cloud LoadBalancer integration. */
  private final LoadBalancer loadbalancer = new LoadBalancer();

  /** The OkHttp path: an OkHttpClient that balances the services under fairway.services. */
  private final OkHttp okhttp = new OkHttp();

  /**
   * The Apache HttpClient 5 path: Boot's HttpClient 5 request factory (RestClient, RestTemplate)
   * balances the services under fairway.services.
   */
  private final HttpClient5 httpclient5 = new HttpClient5();

  /** Server side: what this application tells its callers. */
  private final Server server = new Server();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /** {@code fairway.default.*}: what a service without its own setting gets. */
  public Service getDefault() {
    return defaults;
  }

  public Map<String, Service> getServices() {
    return services;
  }

  public LoadBalancer getLoadbalancer() {
    return loadbalancer;
  }

  public OkHttp getOkhttp() {
    return okhttp;
  }

  public HttpClient5 getHttpclient5() {
    return httpclient5;
  }

  public Server getServer() {
    return server;
  }

  /** One service's settings (or the defaults'). Unset values are null. */
  public static class Service {
    /**
     * The strategy, a Strategy.name(): round-robin, weighted-round-robin, random,
     * least-connections, power-of-two-choices, key-affinity, consistent-hash, least-response-time,
     * concurrency-limited or least-queueing. Default: least-queueing (the SDK's default).
     */
    private @Nullable String strategy;

    /** Ramp a joining or returning instance up from 10% to its full weight over this window; 0 = off (default). */
    private @Nullable Duration slowStart;

    /** Below this percentage of healthy instances, picks go to every instance (panic mode); 0 = off. Default 50. */
    private @Nullable Integer panicThreshold;

    /**
     * How many instances get meters of their own (target tag = the instance's id); the others count
     * together under target "other". 0 puts every instance under "other". Default 100.
     */
    private @Nullable Integer targetMeterLimit;

    /**
     * The caller's zone, for zone-aware routing over the instances' "zone" metadata. Default:
     * spring.cloud.loadbalancer.zone, else none.
     */
    private @Nullable String localZone;

    /** Passive health: how failed calls eject an instance. */
    private final PassiveHealth passiveHealth = new PassiveHealth();

    /** Active health: a GET of a path on every instance on a schedule; off unless the path is set. */
    private final ActiveHealth activeHealth = new ActiveHealth();

    /** The limits of the concurrency-limited strategy (and only of it). */
    private final ConcurrencyLimit concurrencyLimit = new ConcurrencyLimit();

    /**
     * Response statuses that count as a failure of the instance. Default 500, 502, 503, 504. The
     * Apache HttpClient 5 path needs the same codes for every service.
     */
    private @Nullable List<Integer> failureStatusCodes;

    /**
     * A request header whose value is the affinity key (for key-affinity and consistent-hash). Default:
     * none. The Apache HttpClient 5 path needs the same header for every service.
     */
    private @Nullable String affinityHeader;

    /**
     * OkHttp and Apache HttpClient 5 paths (Boot's RestClient and RestTemplate on it included): off,
     * a percentile of the service's latency (p95, p99, pNN) or a fixed delay (50ms, 1s) after which a
     * second copy of the call is sent. Default off. How long the losing copy keeps its slot is
     * hedging.loser-hold, beside it. The HttpClient 5 path needs the same policy for every service.
     */
    private @Nullable String hedging;

    /**
     * OkHttp and Apache HttpClient 5 paths: attempts per call, each on another instance; 1 = no
     * retry. Default 3. The HttpClient 5 path needs the same value for every service.
     */
    private @Nullable Integer maxAttempts;

    /**
     * OkHttp and Apache HttpClient 5 paths: how much retries and hedges may add to the request rate.
     * The HttpClient 5 path needs the same budget for every service.
     */
    private final RetryBudget retryBudget = new RetryBudget();

    private final Subset subset = new Subset();

    public @Nullable String getStrategy() {
      return strategy;
    }

    public void setStrategy(@Nullable String strategy) {
      this.strategy = strategy;
    }

    public @Nullable Duration getSlowStart() {
      return slowStart;
    }

    public void setSlowStart(@Nullable Duration slowStart) {
      this.slowStart = slowStart;
    }

    public @Nullable Integer getPanicThreshold() {
      return panicThreshold;
    }

    public void setPanicThreshold(@Nullable Integer panicThreshold) {
      this.panicThreshold = panicThreshold;
    }

    public @Nullable Integer getTargetMeterLimit() {
      return targetMeterLimit;
    }

    public void setTargetMeterLimit(@Nullable Integer targetMeterLimit) {
      this.targetMeterLimit = targetMeterLimit;
    }

    public @Nullable String getLocalZone() {
      return localZone;
    }

    public void setLocalZone(@Nullable String localZone) {
      this.localZone = localZone;
    }

    public PassiveHealth getPassiveHealth() {
      return passiveHealth;
    }

    public ActiveHealth getActiveHealth() {
      return activeHealth;
    }

    public ConcurrencyLimit getConcurrencyLimit() {
      return concurrencyLimit;
    }

    public @Nullable List<Integer> getFailureStatusCodes() {
      return failureStatusCodes;
    }

    public void setFailureStatusCodes(@Nullable List<Integer> failureStatusCodes) {
      this.failureStatusCodes = failureStatusCodes == null ? null : new ArrayList<>(failureStatusCodes);
    }

    public @Nullable String getAffinityHeader() {
      return affinityHeader;
    }

    public void setAffinityHeader(@Nullable String affinityHeader) {
      this.affinityHeader = affinityHeader;
    }

    public @Nullable String getHedging() {
      return hedging;
    }

    public void setHedging(@Nullable String hedging) {
      this.hedging = hedging;
    }

    public @Nullable Integer getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(@Nullable Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public RetryBudget getRetryBudget() {
      return retryBudget;
    }

    public Subset getSubset() {
      return subset;
    }
  }

  /**
   * Deterministic subsetting: this application balances over its own window of a service's
   * instances, placed by its own registration in Consul (needs fairway.consul.enabled=true).
   */
  public static class Subset {
    /** The least number of instances in this application's window (1..1000000). Default: no subsetting. */
    private @Nullable Integer size;

    /** The window never holds fewer instances than this, whatever size says (1..1000000). Default 12. */
    private @Nullable Integer floor;

    public @Nullable Integer getSize() {
      return size;
    }

    public void setSize(@Nullable Integer size) {
      this.size = size;
    }

    public @Nullable Integer getFloor() {
      return floor;
    }

    public void setFloor(@Nullable Integer floor) {
      this.floor = floor;
    }
  }

  /** Passive health: how failed calls eject an instance. */
  public static class PassiveHealth {
    /** False turns passive health off: no instance is ever ejected. Default true. */
    private @Nullable Boolean enabled;

    /** Eject after this many failures in a row; 0 turns the rule off. Default 5. */
    private @Nullable Integer consecutiveFailures;

    /** At most this percentage of the instances is ejected at once. Default 50. */
    private @Nullable Integer maxEjectionPercent;

    /**
     * How long an instance stays out after its first ejection in a row (100ms..1h); each repeated
     * ejection lasts twice as long, up to 5m or this time if longer. Default 10s.
     */
    private @Nullable Duration ejectionTime;

    public @Nullable Duration getEjectionTime() {
      return ejectionTime;
    }

    public void setEjectionTime(@Nullable Duration ejectionTime) {
      this.ejectionTime = ejectionTime;
    }

    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Integer getConsecutiveFailures() {
      return consecutiveFailures;
    }

    public void setConsecutiveFailures(@Nullable Integer consecutiveFailures) {
      this.consecutiveFailures = consecutiveFailures;
    }

    public @Nullable Integer getMaxEjectionPercent() {
      return maxEjectionPercent;
    }

    public void setMaxEjectionPercent(@Nullable Integer maxEjectionPercent) {
      this.maxEjectionPercent = maxEjectionPercent;
    }
  }

  /**
   * Active health checks: every interval, a GET of the path on each instance over HTTP (the JDK's
   * own client, so OkHttp is not needed); a 2xx answer within the timeout passes. Two failed
   * checks in a row take an instance out, two passed ones bring it back.
   */
  public static class ActiveHealth {
    /** The path to GET, with an optional query, such as /actuator/health. Default: none, no active checks. */
    private @Nullable String path;

    /** How often each instance is checked (10ms..1d). Default 10s. */
    private @Nullable Duration interval;

    /** How long one check may take before it counts as failed (10ms..1d). Default 1s. */
    private @Nullable Duration timeout;

    public @Nullable String getPath() {
      return path;
    }

    public void setPath(@Nullable String path) {
      this.path = path;
    }

    public @Nullable Duration getInterval() {
      return interval;
    }

    public void setInterval(@Nullable Duration interval) {
      this.interval = interval;
    }

    public @Nullable Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(@Nullable Duration timeout) {
      this.timeout = timeout;
    }
  }

  /** The limits of strategy concurrency-limited; setting one with another strategy fails startup. */
  public static class ConcurrencyLimit {
    /** Calls in flight per instance before the strategy prefers another instance (1..1000000). Default 8. */
    private @Nullable Integer soft;

    /** Calls in flight per instance that are never exceeded; further calls wait (soft..1000000). Default 16. */
    private @Nullable Integer hard;

    public @Nullable Integer getSoft() {
      return soft;
    }

    public void setSoft(@Nullable Integer soft) {
      this.soft = soft;
    }

    public @Nullable Integer getHard() {
      return hard;
    }

    public void setHard(@Nullable Integer hard) {
      this.hard = hard;
    }
  }

  /** OkHttp and Apache HttpClient 5 paths: how much retries (and hedges) may add to a service's request rate. */
  public static class RetryBudget {
    /** Retries may add this share of the request rate (0.0..10.0; 0.2 = 20%). Default 0.2. */
    private @Nullable Double percent;

    /** Plus this many retries per second, so low traffic can retry too (0..10000). Default 10. */
    private @Nullable Integer minPerSecond;

    public @Nullable Double getPercent() {
      return percent;
    }

    public void setPercent(@Nullable Double percent) {
      this.percent = percent;
    }

    public @Nullable Integer getMinPerSecond() {
      return minPerSecond;
    }

    public void setMinPerSecond(@Nullable Integer minPerSecond) {
      this.minPerSecond = minPerSecond;
    }
  }

  /** The Spring Cloud LoadBalancer integration. */
  public static class LoadBalancer {
    /** False leaves Spring Cloud LoadBalancer's own balancers in place. Default true. */
    private boolean enabled = true;

    /**
     * A pick that no completion reaches within this time (a caller that called choose() and never
     * executed, a cancelled reactive call) is released, so its in-flight slot is not held forever.
     * Default 5m.
     */
    private Duration abandonedPickTimeout = Duration.ofMinutes(5);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getAbandonedPickTimeout() {
      return abandonedPickTimeout;
    }

    public void setAbandonedPickTimeout(Duration abandonedPickTimeout) {
      this.abandonedPickTimeout = abandonedPickTimeout;
    }
  }

  /** The OkHttp path. */
  public static class OkHttp {
    /** True provides an OkHttpClient bean that balances the services named under fairway.services. Default false. */
    private boolean enabled;

    /** How often each service's instances are read again from the DiscoveryClient. Default 30s. */
    private Duration refreshInterval = Duration.ofSeconds(30);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getRefreshInterval() {
      return refreshInterval;
    }

    public void setRefreshInterval(Duration refreshInterval) {
      this.refreshInterval = refreshInterval;
    }
  }

  /** The Apache HttpClient 5 path. */
  public static class HttpClient5 {
    /**
     * True makes the Apache HttpClient 5 request factory that Boot gives RestClient.Builder and
     * RestTemplateBuilder balance the services named under fairway.services (httpclient5 and
     * lb-apache-httpclient5 on the classpath). Default false.
     */
    private boolean enabled;

    /** How often each service's instances are read again from the DiscoveryClient. Default 30s. */
    private Duration refreshInterval = Duration.ofSeconds(30);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getRefreshInterval() {
      return refreshInterval;
    }

    public void setRefreshInterval(Duration refreshInterval) {
      this.refreshInterval = refreshInterval;
    }
  }

  /** Server side. */
  public static class Server {
    /** ORCA load reports (the endpoint-load-metrics response header) for Fairway clients. */
    private final LoadReports loadReports = new LoadReports();

    public LoadReports getLoadReports() {
      return loadReports;
    }
  }

  /** ORCA load reports on this application's responses. */
  public static class LoadReports {
    /** True adds the endpoint-load-metrics header to every response. Default false. */
    private boolean enabled;

    /**
     * The requests this server serves at once, for utilization = in flight / workers. Default:
     * server.tomcat.threads.max (or Jetty's server.jetty.threads.max), else 200.
     */
    private @Nullable Integer workers;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable Integer getWorkers() {
      return workers;
    }

    public void setWorkers(@Nullable Integer workers) {
      this.workers = workers;
    }
  }
}
