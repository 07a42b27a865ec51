package dev.fairway.samples.lab;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * A lab client as a Spring Boot service holds one ({@code --client spring}): a non-web Spring
 * context, started inside the lab's process, whose {@code @LoadBalanced RestClient} calls {@code
 * http://backend/work} through Spring Cloud LoadBalancer. The instances come from simple discovery
 * ({@code spring.cloud.discovery.client.simple.instances.backend[i].uri}), one per lab backend.
 *
 * <p>Which balancer picks: for {@value #SPRING_ROUND_ROBIN}, Spring Cloud LoadBalancer's own
 * {@code RoundRobinLoadBalancer}, its default; for a Fairway strategy name, Fairway's balancer
 * through the starter ({@code fairway.default.strategy}).
 *
 * <p>Spring's retry is on for both (spring-retry on the classpath, {@code
 * spring.cloud.loadbalancer.retry.enabled=true}): a GET that fails to connect, or answers one of
 * {@link #RETRYABLE_STATUS_CODES}, is sent again to another instance, up to {@code --max-attempts}
 * attempts in all ({@code max-retries-on-next-service-instance} = attempts - 1, none on the same
 * instance). Spring Cloud LoadBalancer retries no status code unless told; 500, 502, 503 and 504
 * are the starter's default failure codes, so both balancers retry the same responses.
 *
 * <p>The HTTP client under the RestClient is the JDK's {@link HttpClient}, which Spring picks by
 * default when no other client library is on the classpath, pinned to HTTP/1.1 (its default,
 * HTTP/2, would offer an h2c upgrade on every new connection to servers that speak only 1.1).
 * An {@link AttemptCounter} (a {@code LoadBalancerLifecycle}) sees every attempt with its chosen
 * instance: that gives the retries and the calls in flight per backend, the same way for both
 * balancers.
 */
final class SpringLabClient implements LabClient {
  /** Spring Cloud LoadBalancer's default balancer, the incumbent. */
  static final String SPRING_ROUND_ROBIN = "spring-round-robin";
  /** The lab's names for Spring Cloud LoadBalancer's own balancers. */
  static final List<String> SPRING_STRATEGIES = List.of(SPRING_ROUND_ROBIN);
  static final String RETRYABLE_STATUS_CODES = "500,502,503,504";
  private static final URI WORK = URI.create("http://" + ScenarioRun.SERVICE + "/work");
  /**
   * What one more client adds to a run's setup and teardown, for the progress line's estimate: a
   * small context takes a fraction of a second to a second to start, and four start at a time.
   */
  static final double SECONDS_PER_CLIENT = 0.2;
  /** Contexts started at once: more than the machine's cores, so a busy machine still gives them time. */
  static final int STARTERS = 4;
  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);
  private static final List<String> UNUSED_AUTO_CONFIGURATIONS = List.of(
      "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration",
      "org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration",
      "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration",
      "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.client.RestTemplateAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.client.RestClientAutoConfiguration",
      "org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration",
      "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration");
  /** Attempts the current thread's call has made so far (the calls of one user run on its thread). */
  private static final ThreadLocal<int[]> ATTEMPTS = ThreadLocal.withInitial(() -> new int[1]);

  static {
    // Boot would otherwise take over java.util.logging (or Logback in tests) for the whole JVM and
    // reset the levels the lab sets. The lab's contexts log nothing of their own.
    if (System.getProperty(LoggingSystem.SYSTEM_PROPERTY) == null) {
      System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE);
    }
  }

  private final ConfigurableApplicationContext context;
  private final RestClient rest;
  private final AttemptCounter attempts;

  private SpringLabClient(ConfigurableApplicationContext context) {
    this.context = context;
    this.attempts = context.getBean(AttemptCounter.class);
    this.rest = context.getBean(RestClient.Builder.class).build();
  }

  /**
   * Starts client {@code index} of a run for {@code strategy} ({@value #SPRING_ROUND_ROBIN} or a
   * Fairway strategy name), with one instance per backend.
   */
  static SpringLabClient start(int index, String strategy, Backend[] backends, LabOptions options) {
    Map<String, Object> properties = properties(index, strategy, backends, options);
    ConfigurableApplicationContext context =
        new SpringApplicationBuilder(ClientApplication.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            .registerShutdownHook(false)
            .properties(properties)
            .run();
    try {
      checkBalancer(strategy, balancerOf(context));
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
    return new SpringLabClient(context);
  }

  /**
   * Fills {@code clients} with started clients, {@value #STARTERS} at a time (a context takes a
   * few hundred milliseconds, a fleet has fifty). On a failure the clients already started stay in
   * the array for the caller to close, and the first failure is thrown once every start has ended.
   */
  static void startAll(LabClient[] clients, String strategy, Backend[] backends, LabOptions options)
      throws InterruptedException {
    ExecutorService starters = Executors.newFixedThreadPool(Math.min(STARTERS, clients.length), r -> {
      Thread t = new Thread(r, "lab-spring-start");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> started = new ArrayList<>();
      for (int k = 0; k < clients.length; k++) {
        int index = k;
        started.add(starters.submit(() -> {
          clients[index] = start(index, strategy, backends, options);
        }));
      }
      RuntimeException failure = null;
      for (Future<?> f : started) {
        try {
          f.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
          failure = failure != null ? failure
              : e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
          failure = failure != null ? failure : new IllegalStateException("a Spring client did not start in " + START_TIMEOUT);
        }
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      starters.shutdownNow();
      starters.awaitTermination(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** The balancer Spring Cloud LoadBalancer uses for the lab's service in {@code context}. */
  static ReactiveLoadBalancer<ServiceInstance> balancerOf(ConfigurableApplicationContext context) {
    return context.getBean(LoadBalancerClientFactory.class).getInstance(ScenarioRun.SERVICE);
  }

  /**
   * A run labelled with a Fairway strategy must be balanced by Fairway, and {@value
   * #SPRING_ROUND_ROBIN} by Spring's round robin: without the starter on the classpath (or with its
   * client part off) Spring would quietly round-robin under Fairway's name.
   */
  static void checkBalancer(String strategy, ReactiveLoadBalancer<ServiceInstance> balancer) {
    boolean springRoundRobin = balancer instanceof RoundRobinLoadBalancer;
    if (strategy.equals(SPRING_ROUND_ROBIN) != springRoundRobin) {
      throw new IllegalStateException("strategy " + strategy + ": service " + ScenarioRun.SERVICE + " is balanced by "
          + (balancer == null ? "nothing" : balancer.getClass().getName()));
    }
  }

  /** The context's configuration: what a Spring Boot user writes in application.properties. */
  static Map<String, Object> properties(int index, String strategy, Backend[] backends, LabOptions options) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("spring.application.name", "lab-client-" + index);
    String instances = "spring.cloud.discovery.client.simple.instances." + ScenarioRun.SERVICE;
    for (int i = 0; i < backends.length; i++) {
      String prefix = instances + "[" + i + "].";
      p.put(prefix + "uri", "http://127.0.0.1:" + backends[i].port());
      // The target's id in the starter's balancer: the backend's name, as ScenarioRun#newBalancer
      // gives it, so consistent-hash places the users the same way whatever ports the backends got.
      p.put(prefix + "instance-id", backends[i].name());
      p.put(prefix + "metadata." + ScenarioRun.ADMIN_PORT, Integer.toString(backends[i].adminPort()));
      if (strategy.equals("weighted-round-robin")) {
        p.put(prefix + "metadata.weight", Integer.toString(ScenarioRun.WRR_WEIGHTS[i]));
      }
    }
    p.put("spring.cloud.loadbalancer.retry.enabled", "true");
    p.put("spring.cloud.loadbalancer.retry.max-retries-on-same-service-instance", "0");
    p.put("spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance",
        Integer.toString(options.maxAttempts() - 1));
    p.put("spring.cloud.loadbalancer.retry.retryable-status-codes", RETRYABLE_STATUS_CODES);
    // The balancer's per-service child context is built at startup, not in the first call.
    p.put("spring.cloud.loadbalancer.eager-load.clients", ScenarioRun.SERVICE);
    // What the lab's clients never use, left out so that a fleet's fifty contexts start in seconds
    // (JSON alone took a fifth of a context's start). Nothing here takes part in a call.
    p.put("spring.cloud.refresh.enabled", "false");
    p.put("spring.autoconfigure.exclude", String.join(",", UNUSED_AUTO_CONFIGURATIONS));
    if (SPRING_STRATEGIES.contains(strategy)) {
      p.put("fairway.loadbalancer.enabled", "false"); // the starter's client part off: Spring's own balancer
    } else {
      // The OkHttp client's settings where the starter has them: slow start over 5 s (scaled), one
      // key per user for the key strategies; passive health is the SDK's default, as there (whose
      // ejection times the OkHttp client scales; at time scale 1 they are the same). The OkHttp
      // client also probes each backend's admin port every second; the starter has no active health.
      p.put("fairway.default.strategy", strategy);
      p.put("fairway.default.slow-start", options.scaled(Duration.ofSeconds(5)).toMillis() + "ms");
      if (ScenarioRun.usesKeys(strategy)) {
        p.put("fairway.default.affinity-header", ScenarioRun.USER_HEADER);
      }
    }
    return p;
  }

  @Override
  public Call caller(String user) {
    return () -> {
      ATTEMPTS.get()[0] = 0;
      // An I/O failure reaches the caller as Spring's ResourceAccessException, as in any Spring app.
      return rest.get().uri(WORK).header(ScenarioRun.USER_HEADER, user).exchange((request, response) -> {
        response.getBody().readAllBytes();
        return new Reply(response.getStatusCode().value(), response.getHeaders().getFirst(Backend.BACKEND_HEADER));
      });
    };
  }

  @Override
  public int inFlight(int port) {
    return attempts.inFlight(port);
  }

  @Override
  public long retries() {
    return attempts.retries.sum();
  }

  /** Spring Cloud LoadBalancer does not hedge. */
  @Override
  public long hedgesSent() {
    return 0;
  }

  @Override
  public void close() {
    context.close();
  }

  /** The lab client's Spring Boot application: auto-configuration and the load-balanced builder. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class ClientApplication {
    @Bean
    @LoadBalanced
    RestClient.Builder loadBalancedRestClientBuilder() {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
      JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
      factory.setReadTimeout(Duration.ofSeconds(60));
      return RestClient.builder().requestFactory(factory);
    }

    @Bean
    AttemptCounter labAttemptCounter() {
      return new AttemptCounter();
    }
  }

  /**
   * Sees every attempt with its chosen instance, for either balancer: Spring Cloud LoadBalancer's
   * blocking client calls {@code onStartRequest} before each attempt (the first and each retry) and
   * {@code onComplete} when its response headers arrived or it failed. (A {@code RestClient}
   * interceptor after the load-balancing one would see only first attempts: a retry re-enters the
   * interceptor chain where the load balancer's interceptor left it, past the interceptors after it.)
   */
  static final class AttemptCounter implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {
    final LongAdder retries = new LongAdder();
    private final Map<Integer, AtomicInteger> inFlightByPort = new ConcurrentHashMap<>();

    @Override
    public void onStart(Request<Object> request) {}

    @Override
    public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
      if (ATTEMPTS.get()[0]++ > 0) {
        retries.increment();
      }
      ServiceInstance instance = lbResponse.getServer();
      if (instance != null) {
        inFlightByPort.computeIfAbsent(instance.getPort(), p -> new AtomicInteger()).incrementAndGet();
      }
    }

    @Override
    public void onComplete(CompletionContext<Object, ServiceInstance, Object> completion) {
      Response<ServiceInstance> lbResponse = completion.getLoadBalancerResponse();
      if (completion.status() != CompletionContext.Status.DISCARD && lbResponse != null && lbResponse.getServer() != null) {
        AtomicInteger n = inFlightByPort.get(lbResponse.getServer().getPort());
        if (n != null) {
          n.decrementAndGet();
        }
      }
    }

    int inFlight(int port) {
      AtomicInteger n = inFlightByPort.get(port);
      return n == null ? 0 : n.get();
    }
  }
}
