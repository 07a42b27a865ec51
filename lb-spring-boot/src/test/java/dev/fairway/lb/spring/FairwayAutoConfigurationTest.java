package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** The auto-configuration's conditions, back-offs and property checks, without a server. */
class FairwayAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(
          FairwayAutoConfiguration.class,
          FairwayLoadBalancerAutoConfiguration.class,
          FairwayEndpointAutoConfiguration.class,
          org.springframework.cloud.commons.util.UtilAutoConfiguration.class,
          org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration.class,
          org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration.class,
          org.springframework.cloud.client.loadbalancer.LoadBalancerAutoConfiguration.class,
          org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class,
          org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration.class))
      .withPropertyValues("spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:8081",
          "spring.cloud.discovery.client.simple.instances.payments[0].uri=http://127.0.0.1:8082",
          "management.endpoints.web.exposure.include=fairway");

  private static Object balancerOf(org.springframework.context.ApplicationContext context,
      String service) {
    return context.getBean(LoadBalancerClientFactory.class).getInstance(service);
  }

  @Test
  void everyClient_getsFairway_andItsLifecycle() {
    runner.run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(FairwayBalancers.class).hasSingleBean(FairwayEndpoint.class);
      assertThat(balancerOf(context, "orders")).isInstanceOf(FairwayReactorLoadBalancer.class);
      assertThat(balancerOf(context, "payments")).isInstanceOf(FairwayReactorLoadBalancer.class);
      assertThat(context.getBean(LoadBalancerClientFactory.class).getInstances("orders", LoadBalancerLifecycle.class))
          .hasValueSatisfying(new org.assertj.core.api.Condition<>(l -> l instanceof FairwayLoadBalancerLifecycle,
              "a FairwayLoadBalancerLifecycle"));
    });
  }

  @Configuration(proxyBeanMethods = false)
  @LoadBalancerClient(name = "orders", configuration = RoundRobinForOrders.class)
  static class UserClientConfiguration {}

  /** A user's own balancer, as Spring Cloud LoadBalancer's documentation writes one (not component-scanned). */
  static class RoundRobinForOrders {
    @Bean
    ReactorLoadBalancer<ServiceInstance> roundRobin(Environment environment, LoadBalancerClientFactory factory) {
      String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
      return new RoundRobinLoadBalancer(factory.getLazyProvider(name, ServiceInstanceListSupplier.class), name);
    }
  }

  @Test
  void backsOff_forAClientWithItsOwnLoadBalancerClientConfiguration() {
    runner.withUserConfiguration(UserClientConfiguration.class).run(context -> {
      assertThat(balancerOf(context, "orders")).isInstanceOf(RoundRobinLoadBalancer.class);
      assertThat(balancerOf(context, "payments")).isInstanceOf(FairwayReactorLoadBalancer.class);
    });
  }

  @Configuration(proxyBeanMethods = false)
  @LoadBalancerClients(defaultConfiguration = RoundRobinForOrders.class)
  static class UserDefaultConfiguration {}

  @Test
  void backsOff_forAUsersOwnDefaultConfiguration() {
    runner.withUserConfiguration(UserDefaultConfiguration.class).run(context -> {
      assertThat(balancerOf(context, "orders")).isInstanceOf(RoundRobinLoadBalancer.class);
      assertThat(balancerOf(context, "payments")).isInstanceOf(RoundRobinLoadBalancer.class);
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class UserBalancerBean {
    @Bean
    ReactorLoadBalancer<ServiceInstance> everyonesBalancer(LoadBalancerClientFactory factory) {
      return new RoundRobinLoadBalancer(factory.getLazyProvider("orders", ServiceInstanceListSupplier.class), "orders");
    }
  }

  @Test
  void backsOff_forAUsersBalancerBeanInTheApplicationContext() {
    runner.withUserConfiguration(UserBalancerBean.class).run(context -> {
      assertThat(balancerOf(context, "orders")).isInstanceOf(RoundRobinLoadBalancer.class);
    });
  }

  @Test
  void switchedOff_leavesSpringsRoundRobin() {
    runner.withPropertyValues("fairway.loadbalancer.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(FairwayBalancers.class);
      assertThat(balancerOf(context, "orders")).isInstanceOf(RoundRobinLoadBalancer.class);
    });
    runner.withPropertyValues("fairway.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(FairwayBalancers.class).doesNotHaveBean(FairwayEndpoint.class);
      assertThat(balancerOf(context, "orders")).isInstanceOf(RoundRobinLoadBalancer.class);
    });
  }

  @Test
  void withoutSpringCloudLoadBalancer_theClientPartStaysOff() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(FairwayAutoConfiguration.class, FairwayLoadBalancerAutoConfiguration.class,
            FairwayEndpointAutoConfiguration.class))
        .withClassLoader(new FilteredClassLoader("org.springframework.cloud.loadbalancer"))
        .withPropertyValues("fairway.services.orders.strategy=round-robin",
            "management.endpoints.web.exposure.include=fairway")
        .run(context -> {
          assertThat(context).hasNotFailed()
              .hasSingleBean(FairwaySettings.class)
              .hasSingleBean(FairwayEndpoint.class)
              .doesNotHaveBean(FairwayLoadBalancerAutoConfiguration.class);
          assertThat(context.getBean(FairwaySettings.class).forService("orders").strategy.name()).isEqualTo("round-robin");
        });
  }

  @Test
  void endpoint_onlyWhenAvailable_asBootsOwnEndpoints() {
    ApplicationContextRunner plain = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(FairwayAutoConfiguration.class, FairwayEndpointAutoConfiguration.class));
    plain.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayEndpoint.class)); // not exposed
    plain.withPropertyValues("management.endpoints.web.exposure.include=health,fairway")
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FairwayEndpoint.class));
    plain.withPropertyValues("management.endpoints.web.exposure.include=*")
        .run(context -> assertThat(context).hasNotFailed().hasSingleBean(FairwayEndpoint.class));
    plain.withPropertyValues("management.endpoints.web.exposure.include=fairway", "management.endpoint.fairway.access=NONE")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayEndpoint.class));
    plain.withPropertyValues("management.endpoints.web.exposure.include=fairway",
        "management.endpoints.web.exposure.exclude=fairway")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayEndpoint.class));
    plain.withPropertyValues("management.endpoints.web.exposure.include=fairway")
        .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate.autoconfigure"))
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayEndpoint.class));
  }

  @Test
  void configuredServices_haveTheirBalancersAtStartup_othersOnTheirFirstCall() {
    runner.withPropertyValues("fairway.services.orders.strategy=round-robin").run(context -> {
      assertThat(context).hasNotFailed();
      FairwayBalancers registry = context.getBean(FairwayBalancers.class);
      // Before any call: the configured service is listed, and its first list is read without a call.
      assertThat(registry.balancers()).containsOnlyKeys("orders");
      dev.fairway.lb.LoadBalancer orders = registry.balancers().get("orders");
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
      while (orders.status().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(5); // the simple discovery client is read on Reactor's bounded-elastic threads
      }
      assertThat(orders.status()).extracting(st -> st.target().port()).containsExactly(8081);
      assertThat(orders.strategy().name()).isEqualTo("round-robin");
      // A service not under fairway.services joins when Spring Cloud LoadBalancer creates its client.
      balancerOf(context, "payments");
      assertThat(registry.balancers()).containsOnlyKeys("orders", "payments");
    });
  }

  @Test
  void activeHealth_probesEachInstanceOverHttp_andTakesOutTheOneThatFails() throws Exception {
    try (Instances instances = new Instances()) {
      java.util.List<String> probed = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
      instances.server(request -> {
        probed.add(request.getMethod() + " " + request.getTarget());
        return new mockwebserver3.MockResponse.Builder().code(200).body("UP").build();
      });
      instances.server(request -> new mockwebserver3.MockResponse.Builder().code(503).body("DOWN").build());
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(
              FairwayAutoConfiguration.class,
              FairwayLoadBalancerAutoConfiguration.class,
              org.springframework.cloud.commons.util.UtilAutoConfiguration.class,
              org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration.class,
              org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration.class,
              org.springframework.cloud.client.loadbalancer.LoadBalancerAutoConfiguration.class,
              org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class))
          .withPropertyValues(instances.properties("orders"))
          .withPropertyValues("fairway.services.orders.active-health.path=/health?deep=1",
              "fairway.services.orders.active-health.interval=50ms",
              "fairway.services.orders.active-health.timeout=5s")
          .run(context -> {
            assertThat(context).hasNotFailed();
            dev.fairway.lb.LoadBalancer orders = context.getBean(FairwayBalancers.class).balancers().get("orders");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && !(orders.status().size() == 2
                && orders.status().get(1).state() == dev.fairway.lb.TargetState.UNHEALTHY)) {
              Thread.sleep(10); // probes run on the balancer's own threads, every 50 ms
            }
            assertThat(orders.status()).extracting(st -> st.target().id() + " " + st.state() + " " + st.outReason())
                .containsExactly("i0 HEALTHY null", "i1 UNHEALTHY active-health");
            assertThat(probed).isNotEmpty().allMatch(line -> line.equals("GET /health?deep=1"));
          });
    }
  }

  @Test
  void withoutActuator_noEndpoint() {
    runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate")).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(FairwayEndpoint.class);
      assertThat(balancerOf(context, "orders")).isInstanceOf(FairwayReactorLoadBalancer.class);
    });
  }

  @Test
  void properties_bind_perServiceOverDefaultsOverTheSdk() {
    runner.withPropertyValues(
        "fairway.default.strategy=power-of-two-choices",
        "fairway.default.failure-status-codes=503",
        "fairway.services.orders.strategy=least-response-time",
        "fairway.services.orders.slow-start=30s",
        "fairway.services.orders.panic-threshold=20",
        "fairway.default.target-meter-limit=7",
        "fairway.services.orders.passive-health.consecutive-failures=3",
        "fairway.services.orders.passive-health.max-ejection-percent=34",
        "fairway.services.orders.failure-status-codes=500,502",
        "fairway.services.orders.affinity-header=X-User",
        "fairway.services.payments.local-zone=eu-1",
        "spring.cloud.loadbalancer.zone=us-1").run(context -> {
          FairwaySettings settings = context.getBean(FairwaySettings.class);
          ServiceSettings orders = settings.forService("orders");
          assertThat(orders.strategy.name()).isEqualTo("least-response-time");
          assertThat(orders.slowStart).isEqualTo(Duration.ofSeconds(30));
          assertThat(orders.panicThreshold).isEqualTo(20);
          assertThat(orders.targetMeterLimit).isEqualTo(7);
          assertThat(orders.localZone).isEqualTo("us-1");
          assertThat(orders.passiveHealth).hasToString(
              "PassiveHealth{consecutiveFailures=3, maxEjectionPercent=34, failureRateThreshold=50.0%}");
          assertThat(orders.failureStatusCodes).containsExactly(500, 502);
          assertThat(orders.affinityHeader).isEqualTo("X-User");
          ServiceSettings payments = settings.forService("payments");
          assertThat(payments.strategy.name()).isEqualTo("power-of-two-choices");
          assertThat(payments.localZone).isEqualTo("eu-1");
          assertThat(payments.failureStatusCodes).containsExactly(503);
          ServiceSettings other = settings.forService("inventory"); // not listed: fairway.default.*
          assertThat(other.strategy.name()).isEqualTo("power-of-two-choices");
          assertThat(other.slowStart).isNull();
          assertThat(other.failureStatusCodes).containsExactly(503);
          assertThat(other.passiveHealth).hasToString(
              "PassiveHealth{consecutiveFailures=5, maxEjectionPercent=50, failureRateThreshold=50.0%}");
          assertThat(((FairwayReactorLoadBalancer) balancerOf(context, "orders")).settings()).isSameAs(orders);
        });
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "fairway.services.orders.active-health.interval=5ms|"
          + "fairway.services.orders.active-health.interval: PT0.005S (expected: 10ms..1d)",
      "fairway.services.orders.active-health.timeout=2d|fairway.services.orders.active-health.timeout: PT48H (expected: 10ms..1d)",
      "fairway.services.orders.concurrency-limit.soft=0|fairway.services.orders.concurrency-limit.soft: 0 (expected: 1..1000000)",
      "fairway.services.orders.concurrency-limit.hard=4|"
          + "fairway.services.orders.concurrency-limit.hard: 4 (expected: softLimit (8)..1000000)",
  })
  void badValueBesideItsSwitch_failsStartup_namingThePropertyAndTheValue(String property, String message) {
    runner.withPropertyValues("fairway.services.orders.active-health.path=/health",
        "fairway.services.orders.strategy=concurrency-limited", property).run(context -> {
          FairwayConfigurationException cause = findCause(context.getStartupFailure());
          assertThat(cause.getMessage()).isEqualTo(message);
          assertThat(cause.property()).isEqualTo(property.substring(0, property.indexOf('=')));
        });
  }

  @Test
  void newServiceSettings_bind_andReachTheBalancer() {
    runner.withPropertyValues(
        "fairway.default.passive-health.ejection-time=30s",
        "fairway.services.orders.strategy=concurrency-limited",
        "fairway.services.orders.concurrency-limit.soft=2",
        "fairway.services.orders.concurrency-limit.hard=3",
        "fairway.services.orders.active-health.path=/actuator/health?probe=1",
        "fairway.services.orders.active-health.interval=2s",
        "fairway.services.orders.active-health.timeout=300ms",
        "fairway.services.orders.hedging=p95",
        "fairway.services.orders.hedging.loser-hold=2s",
        "fairway.default.hedging.loser-hold=0s").run(context -> {
          assertThat(context).hasNotFailed();
          FairwaySettings settings = context.getBean(FairwaySettings.class);
          ServiceSettings orders = settings.forService("orders");
          assertThat(orders.strategy).hasToString("concurrency-limited(soft=2, hard=3, maxWait=PT1S)");
          assertThat(orders.activeHealth).hasToString("ActiveHealth{interval=PT2S, timeout=PT0.3S, healthyThreshold=2, "
              + "unhealthyThreshold=2, jitter=0.1}");
          assertThat(orders.hedging.value()).isEqualTo("p95");
          assertThat(orders.loserHold.value()).isEqualTo(Duration.ofSeconds(2));
          assertThat(orders.loserHold.property()).isEqualTo("fairway.services.orders.hedging.loser-hold");
          assertThat(OkHttpSettings.interceptorFor(orders)).isNotNull();
          ServiceSettings other = settings.forService("inventory");
          assertThat(other.activeHealth).isNull();
          assertThat(other.loserHold.value()).isEqualTo(Duration.ZERO);
          assertThat(other.loserHold.property()).isEqualTo("fairway.default.hedging.loser-hold");
          // Ejection time from fairway.default: the first ejection lasts 30 s.
          dev.fairway.lb.LoadBalancer lb = orders.configure(dev.fairway.lb.LoadBalancer.builder("orders"))
              .targets(dev.fairway.lb.Target.of("127.0.0.1", 1), dev.fairway.lb.Target.of("127.0.0.1", 2)).build();
          try {
            lb.pickTarget(dev.fairway.lb.Target.of("127.0.0.1", 1)).failure(new java.net.ConnectException("refused"));
            Duration left = lb.status().get(0).ejectedFor();
            assertThat(left).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30)).isGreaterThan(Duration.ofSeconds(20));
          } finally {
            lb.close();
          }
        });
  }

  @Test
  void concurrencyLimits_inheritedFromTheDefaults_applyOnlyWhereTheStrategyIsConcurrencyLimited() {
    runner.withPropertyValues("fairway.default.strategy=concurrency-limited", "fairway.default.concurrency-limit.soft=3",
        "fairway.services.orders.strategy=round-robin").run(context -> {
          assertThat(context).hasNotFailed();
          FairwaySettings settings = context.getBean(FairwaySettings.class);
          assertThat(settings.forService("orders").strategy.name()).isEqualTo("round-robin");
          assertThat(settings.forService("inventory").strategy).hasToString("concurrency-limited(soft=3, hard=16, maxWait=PT1S)");
        });
  }

  @Test
  void noProperties_theSdksDefaults() {
    runner.run(context -> {
      ServiceSettings orders = context.getBean(FairwaySettings.class).forService("orders");
      assertThat(orders.strategy).isNull(); // LoadBalancer.Builder's default, least queueing
      assertThat(orders.localZone).isEmpty();
      assertThat(orders.failureStatusCodes).containsExactly(500, 502, 503, 504);
      assertThat(orders.affinityHeader).isNull();
    });
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "fairway.services.orders.strategy=fastest|fairway.services.orders.strategy: \"fastest\" (expected: one of round-robin, "
          + "weighted-round-robin, random, least-connections, power-of-two-choices, key-affinity, consistent-hash, "
          + "least-response-time, concurrency-limited, least-queueing)",
      "fairway.default.strategy=fastest|fairway.default.strategy: \"fastest\" (expected: one of round-robin, "
          + "weighted-round-robin, random, least-connections, power-of-two-choices, key-affinity, consistent-hash, "
          + "least-response-time, concurrency-limited, least-queueing)",
      "fairway.services.orders.slow-start=2h|fairway.services.orders.slow-start: PT2H (expected: 0s..1h)",
      "fairway.services.orders.panic-threshold=101|fairway.services.orders.panic-threshold: 101 (expected: 0..100)",
      "fairway.default.panic-threshold=-1|fairway.default.panic-threshold: -1 (expected: 0..100)",
      "fairway.services.orders.target-meter-limit=-1|fairway.services.orders.target-meter-limit: -1 (expected: 0..10000)",
      "fairway.services.orders.passive-health.consecutive-failures=-1|"
          + "fairway.services.orders.passive-health.consecutive-failures: -1 (expected: 0..1000)",
      "fairway.services.orders.passive-health.max-ejection-percent=101|"
          + "fairway.services.orders.passive-health.max-ejection-percent: 101 (expected: 0..100)",
      "fairway.services.orders.failure-status-codes=500,99|"
          + "fairway.services.orders.failure-status-codes: 99 (expected: HTTP status codes 100..599, possibly none)",
      "fairway.loadbalancer.abandoned-pick-timeout=0s|fairway.loadbalancer.abandoned-pick-timeout: PT0S (expected: at least 1s)",
      "fairway.services.orders.affinity-header=X User|fairway.services.orders.affinity-header: \"X User\" (expected: an HTTP header name)",
      "fairway.services.orders.passive-health.ejection-time=50ms|"
          + "fairway.services.orders.passive-health.ejection-time: PT0.05S (expected: 100ms..1h)",
      "fairway.default.passive-health.ejection-time=2h|fairway.default.passive-health.ejection-time: PT2H (expected: 100ms..1h)",
      "fairway.services.orders.active-health.path=health|"
          + "fairway.services.orders.active-health.path: \"health\" (expected: an absolute path such as /actuator/health)",
      "fairway.services.orders.active-health.interval=5ms|"
          + "fairway.services.orders.active-health.interval: set while fairway.services.orders.active-health.path is not "
          + "(expected: a path such as /actuator/health, or neither)",
      "fairway.services.orders.concurrency-limit.soft=4|fairway.services.orders.concurrency-limit.soft: set while "
          + "fairway.services.orders.strategy is not set (least-queueing) (expected: strategy concurrency-limited)",
      "fairway.default.hedging.loser-hold=11m|fairway.default.hedging.loser-hold: 11m (expected: 0s..10m)",
      "fairway.default.hedging.loser-hold=soon|fairway.default.hedging.loser-hold: \"soon\" (expected: a duration such as 10s)",
  })
  void badValue_failsStartup_namingThePropertyAndTheValue(String property, String message) {
    runner.withPropertyValues(property).run(context -> {
      assertThat(context).hasFailed();
      Throwable failure = context.getStartupFailure();
      FairwayConfigurationException cause = findCause(failure);
      assertThat(cause.getMessage()).isEqualTo(message);
      assertThat(cause.property()).isEqualTo(property.substring(0, property.indexOf('=')));
      FailureAnalysis analysis = new FairwayConfigurationFailureAnalyzer().analyze(failure);
      assertThat(analysis.getDescription()).isEqualTo("Invalid Fairway configuration: " + message);
      assertThat(analysis.getAction()).startsWith("Change " + cause.property() + " ");
    });
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "fairway.services.orders.hedging=p42|fairway.services.orders.hedging: 42.0 (expected: 50.0..99.99)",
      "fairway.services.orders.hedging=fast|fairway.services.orders.hedging: \"fast\" (expected: off, p95, p99 or a delay such as 50ms)",
      "fairway.default.hedging=0ms|fairway.default.hedging: PT0S (expected: 1ms..1h)",
      "fairway.services.orders.max-attempts=0|fairway.services.orders.max-attempts: 0 (expected: 1..10)",
      "fairway.services.orders.retry-budget.percent=11|fairway.services.orders.retry-budget.percent: 11.0 (expected: 0.0..10.0)",
      "fairway.services.orders.retry-budget.min-per-second=-1|fairway.services.orders.retry-budget.min-per-second: -1 (expected: 0..10000)",
      "fairway.okhttp.refresh-interval=1ms|fairway.okhttp.refresh-interval: PT0.001S (expected: at least 10ms)",
  })
  void badOkHttpValue_failsStartup_namingThePropertyAndTheValue(String property, String message) {
    runner.withConfiguration(AutoConfigurations.of(FairwayOkHttpAutoConfiguration.class))
        .withPropertyValues("fairway.okhttp.enabled=true", "fairway.services.orders.strategy=random", property)
        .run(context -> {
          FairwayConfigurationException cause = findCause(context.getStartupFailure());
          assertThat(cause.getMessage()).isEqualTo(message);
          assertThat(cause.property()).isEqualTo(property.substring(0, property.indexOf('=')));
        });
  }

  @Test
  void okHttpPath_offByDefault_andBacksOffForTheUsersClient() {
    AutoConfigurations okhttp = AutoConfigurations.of(FairwayOkHttpAutoConfiguration.class);
    runner.withConfiguration(okhttp).run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean(FairwayOkHttp.class).doesNotHaveBean(okhttp3.OkHttpClient.class));
    runner.withConfiguration(okhttp).withPropertyValues("fairway.okhttp.enabled=true",
        "fairway.services.orders.strategy=random").withBean(okhttp3.OkHttpClient.class, okhttp3.OkHttpClient::new)
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(FairwayOkHttp.class).hasSingleBean(okhttp3.OkHttpClient.class);
          assertThat(context.getBean(FairwayOkHttp.class).client()).isNotSameAs(context.getBean(okhttp3.OkHttpClient.class));
        });
    runner.withConfiguration(okhttp).withPropertyValues("fairway.okhttp.enabled=true")
        .withClassLoader(new FilteredClassLoader("dev.fairway.lb.okhttp"))
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayOkHttp.class));
  }

  @Test
  void httpClient5Path_offByDefault_andOnlyWithHttpClient5AndTheAdapterOnTheClasspath() {
    AutoConfigurations hc5 = AutoConfigurations.of(FairwayHttpClient5AutoConfiguration.class);
    runner.withConfiguration(hc5).withPropertyValues("fairway.services.orders.strategy=random")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayHttpClient5Path.class));
    runner.withConfiguration(hc5).withPropertyValues("fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=random")
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(FairwayHttpClient5Path.class);
          assertThat(context.getBean(FairwayBalancers.class).balancers()).containsKey("httpclient5:orders");
        });
    for (String missing : new String[] {"dev.fairway.lb.hc5", "org.apache.hc.client5"}) {
      runner.withConfiguration(hc5).withPropertyValues("fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=random")
          .withClassLoader(new FilteredClassLoader(missing))
          .run(context -> assertThat(context).as(missing).hasNotFailed().doesNotHaveBean(FairwayHttpClient5Path.class));
    }
    runner.withConfiguration(hc5).withPropertyValues("fairway.httpclient5.enabled=true", "fairway.enabled=false",
        "fairway.services.orders.strategy=random")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FairwayHttpClient5Path.class));
  }

  @Test
  void passiveHealthOff_withItsKnobs_isRejected() {
    runner.withPropertyValues("fairway.services.orders.passive-health.enabled=false",
        "fairway.services.orders.passive-health.consecutive-failures=3").run(context -> {
          assertThat(findCause(context.getStartupFailure()).getMessage()).isEqualTo(
              "fairway.services.orders.passive-health.consecutive-failures: set while "
                  + "fairway.services.orders.passive-health.enabled is false (expected: one or the other)");
        });
  }

  @Test
  void failureAnalyzer_isRegistered() {
    assertThat(org.springframework.core.io.support.SpringFactoriesLoader.loadFactoryNames(
        org.springframework.boot.diagnostics.FailureAnalyzer.class, getClass().getClassLoader()))
        .contains(FairwayConfigurationFailureAnalyzer.class.getName());
  }

  private static final AutoConfigurations LOAD_REPORTS = AutoConfigurations.of(FairwayAutoConfiguration.class,
      FairwayLoadReportAutoConfiguration.class);

  @Test
  void loadReports_offByDefault_servletFilterOrWebFilterWhenOn() {
    new WebApplicationContextRunner().withConfiguration(LOAD_REPORTS).run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean(LoadReport.class).doesNotHaveBean(LoadReportFilter.class));
    new WebApplicationContextRunner().withConfiguration(LOAD_REPORTS)
        .withPropertyValues("fairway.server.load-reports.enabled=true").run(context -> {
          assertThat(context).hasSingleBean(LoadReportFilter.class).doesNotHaveBean(LoadReportWebFilter.class);
          assertThat(context.getBean(LoadReport.class).workers()).isEqualTo(200); // Tomcat's default
        });
    new ReactiveWebApplicationContextRunner().withConfiguration(LOAD_REPORTS)
        .withPropertyValues("fairway.server.load-reports.enabled=true").run(context ->
            assertThat(context).hasSingleBean(LoadReportWebFilter.class).doesNotHaveBean(LoadReportFilter.class));
    runner.withConfiguration(LOAD_REPORTS).withPropertyValues("fairway.server.load-reports.enabled=true").run(context ->
        assertThat(context).hasNotFailed().doesNotHaveBean(LoadReportFilter.class).doesNotHaveBean(LoadReportWebFilter.class));
  }

  @Test
  void loadReports_workers_configuredOrTheContainersThreads() {
    WebApplicationContextRunner web = new WebApplicationContextRunner().withConfiguration(LOAD_REPORTS)
        .withPropertyValues("fairway.server.load-reports.enabled=true");
    web.withPropertyValues("server.tomcat.threads.max=50").run(context ->
        assertThat(context.getBean(LoadReport.class).workers()).isEqualTo(50));
    web.withPropertyValues("server.tomcat.threads.max=50", "fairway.server.load-reports.workers=8").run(context ->
        assertThat(context.getBean(LoadReport.class).workers()).isEqualTo(8));
    web.withPropertyValues("fairway.server.load-reports.workers=0").run(context ->
        assertThat(findCause(context.getStartupFailure()).getMessage())
            .isEqualTo("fairway.server.load-reports.workers: 0 (expected: at least 1)"));
  }

  @Test
  void loadReport_header_isWhatLbOkHttpsParserReads() {
    assertThat(LoadReport.header(5, 8))
        .isEqualTo("TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8");
    assertThat(LoadReport.header(-1, 200))
        .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=200");
    assertThat(LoadReport.header(1, 3))
        .isEqualTo("TEXT application_utilization=0.333, named_metrics.rif=1, named_metrics.workers=3");
  }

  static FairwayConfigurationException findCause(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof FairwayConfigurationException f) {
        return f;
      }
    }
    throw new AssertionError("no FairwayConfigurationException in", failure);
  }
}
