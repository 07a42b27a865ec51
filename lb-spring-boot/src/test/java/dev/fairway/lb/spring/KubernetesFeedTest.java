package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeKubernetes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

/**
 * {@code fairway.kubernetes.*} in a Boot context, against lb-discovery-kubernetes' fake API server on
 * loopback: every balancer, on the Spring Cloud LoadBalancer path and the OkHttp path, is fed by the
 * EndpointSlices of the Service of the same name. Spring's simple discovery lists "orders" at port 1,
 * so a pick that came from it would show. Picks are only chosen, never sent: the endpoints' addresses
 * need not serve.
 */
class KubernetesFeedTest {
  private static final Duration BOUND = Duration.ofSeconds(10);
  private static final String NS = "shop";

  private final FakeKubernetes fake = FakeKubernetes.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(
            FairwayAutoConfiguration.class,
            FairwayConsulAutoConfiguration.class,
            FairwayKubernetesAutoConfiguration.class,
            FairwayDnsAutoConfiguration.class,
            FairwayLoadBalancerAutoConfiguration.class,
            FairwayOkHttpAutoConfiguration.class,
            org.springframework.cloud.commons.util.UtilAutoConfiguration.class,
            org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.loadbalancer.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration.class))
        .withPropertyValues("fairway.kubernetes.enabled=true", "fairway.kubernetes.api-server=" + fake.url(),
            "fairway.kubernetes.namespace=" + NS, "fairway.kubernetes.port-name=http",
            "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:1");
  }

  private static EndpointSliceSpec slice(String name, Endpoint... endpoints) {
    EndpointSliceSpec s = EndpointSliceSpec.of(name, "orders").port("metrics", 9090).port("http", 8080);
    for (Endpoint e : endpoints) {
      s.endpoint(e);
    }
    return s;
  }

  @Test
  void aServicesBalancer_getsTheSlicesReadyEndpoints_andFollowsTheirChanges() throws Exception {
    fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.1", "o-1", "z1"),
        Endpoint.at("10.0.0.9").pod("o-9").zone("z1").conditions(false, false, false)));
    runner().withPropertyValues("fairway.okhttp.enabled=true", "fairway.services.orders.strategy=round-robin").run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(KubernetesTargetFeed.class).hasSingleBean(TargetFeed.class);
      LoadBalancer spring = springBalancer(context, "orders");
      LoadBalancer okhttp = context.getBean(FairwayOkHttp.class).balancers().get("orders");
      assertThat(okhttp).as("the OkHttp path's balancer of orders").isNotNull();
      for (LoadBalancer lb : List.of(spring, okhttp)) {
        // The not-ready endpoint takes no calls; the port is the one named http, the zone the endpoint's.
        await("the ready endpoint in " + lb, () -> zones(lb), Map.of("10.0.0.1:8080", "z1")::equals);
      }
      assertThat(choose(context, 3)).containsOnly("10.0.0.1:8080");

      fake.apply(NS, slice("orders-b", Endpoint.readyPod("10.0.0.2", "o-2", "z2")));
      fake.apply(NS, slice("orders-a", Endpoint.readyPod("10.0.0.3", "o-3", "z1")));
      for (LoadBalancer lb : List.of(spring, okhttp)) {
        await("the watched change in " + lb, () -> zones(lb),
            Map.of("10.0.0.2:8080", "z2", "10.0.0.3:8080", "z1")::equals);
      }
      assertThat(choose(context, 8)).containsOnly("10.0.0.2:8080", "10.0.0.3:8080");

      fake.delete(NS, "orders-b");
      await("a deleted slice's endpoint gone", () -> ids(spring), Set.of("10.0.0.3:8080")::equals);
      // A list, then watches from its resourceVersion, in the configured namespace, by the Service label.
      assertThat(fake.requests()).extracting(FakeKubernetes.SeenRequest::target)
          .anyMatch(t -> t.startsWith("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?")
              && t.contains("kubernetes.io%2Fservice-name%3Dorders") && !t.contains("watch="))
          .anyMatch(t -> t.contains("watch=") && t.contains("resourceVersion="));
    });
  }

  @Test
  void theServicesLocalZone_isTheSourcesLocalZone_unlessKubernetesSetsItsOwn() {
    runner().withPropertyValues("fairway.default.local-zone=z2").run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(localZone(context)).isEqualTo("z2");
    });
    runner().withPropertyValues("fairway.default.local-zone=z2", "fairway.kubernetes.local-zone=z1").run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(localZone(context)).isEqualTo("z1");
    });
  }

  /** The local zone of a source the feed opens for orders. */
  private static String localZone(AssertableApplicationContext context) {
    TargetFeed feed = context.getBean(TargetFeed.class);
    try (ServiceFeed opened = feed.open(context.getBean(FairwaySettings.class).forService("orders"))) {
      return ((KubernetesTargetSource) opened.source()).localZone();
    }
  }

  @Test
  void backsOff_whenNotEnabled_orWithoutLbDiscoveryKubernetes() {
    runner().withPropertyValues("fairway.kubernetes.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(KubernetesTargetFeed.class).doesNotHaveBean(TargetFeed.class);
      assertThat(choose(context, 1)).containsExactly("127.0.0.1:1"); // the simple discovery's list
    });
    runner().withClassLoader(new FilteredClassLoader("dev.fairway.lb.kubernetes")).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(TargetFeed.class);
      assertThat(choose(context, 1)).containsExactly("127.0.0.1:1");
    });
    assertThat(fake.requests()).isEmpty();
  }

  @Test
  void twoFeedsEnabled_failStartup_namingBoth() {
    runner().withPropertyValues("fairway.dns.enabled=true").run(context -> {
      assertThat(cause(context)).hasMessageContaining("fairway.kubernetes.enabled=true")
          .hasMessageContaining("fairway.dns.enabled=true");
    });
    runner().withPropertyValues("fairway.consul.enabled=true").run(context -> {
      assertThat(cause(context)).hasMessageContaining("fairway.consul.enabled=true")
          .hasMessageContaining("fairway.kubernetes.enabled=true");
    });
  }

  @Test
  void badValues_failStartup_namingTheProperty() {
    Map<String, String> bad = new TreeMap<>();
    bad.put("fairway.kubernetes.port=0", "fairway.kubernetes.port: 0 (expected: 1..65535)");
    bad.put("fairway.kubernetes.namespace=Shop_1", "fairway.kubernetes.namespace: \"Shop_1\"");
    bad.put("fairway.kubernetes.api-server=ftp://x", "fairway.kubernetes.api-server: ");
    bad.put("fairway.kubernetes.ca-certificate=/nonexistent/ca.pem", "fairway.kubernetes.ca-certificate: /nonexistent/ca.pem");
    bad.put("fairway.kubernetes.first-reply-timeout=-1s", "fairway.kubernetes.first-reply-timeout: PT-1S");
    bad.put("fairway.kubernetes.token-file=/nonexistent/token", "fairway.kubernetes.token-file: /nonexistent/token");
    List<String> seen = new ArrayList<>();
    bad.forEach((setting, message) -> runner().withPropertyValues(setting).run(context -> {
      Throwable t = cause(context);
      assertThat(t).as(setting).hasMessageStartingWith(message);
      seen.add(((FairwayConfigurationException) t).property());
    }));
    assertThat(seen).hasSize(bad.size()).allMatch(p -> p.startsWith("fairway.kubernetes."));
    // port with port-name: one or the other.
    runner().withPropertyValues("fairway.kubernetes.port=8080").run(context -> assertThat(cause(context))
        .hasMessage("fairway.kubernetes.port: 8080 set with fairway.kubernetes.port-name \"http\""
            + " (expected: one or the other)"));
  }

  // ---------------------------------------------------------------------------------------------

  /** The Spring Cloud LoadBalancer client context of {@code service}, created now, and its Fairway balancer. */
  private static LoadBalancer springBalancer(AssertableApplicationContext context, String service) {
    assertThat(context.getBean(LoadBalancerClientFactory.class).getInstance(service))
        .isInstanceOf(FairwayReactorLoadBalancer.class);
    LoadBalancer lb = context.getBean(FairwayBalancers.class).balancers().get(service);
    assertThat(lb).as("the balancer of %s", service).isNotNull();
    return lb;
  }

  private static Set<String> ids(LoadBalancer lb) {
    Set<String> out = new TreeSet<>();
    lb.status().forEach(s -> out.add(s.target().id()));
    return out;
  }

  private static Map<String, String> zones(LoadBalancer lb) {
    Map<String, String> out = new TreeMap<>();
    for (TargetStatus s : lb.status()) {
      out.put(s.target().host() + ":" + s.target().port(), s.target().zone());
    }
    return out;
  }

  /** host:port of {@code n} picks made through Spring Cloud LoadBalancer's client, each released. */
  private static List<String> choose(AssertableApplicationContext context, int n) {
    LoadBalancerClient client = context.getBean(LoadBalancerClient.class);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ServiceInstance chosen = client.choose("orders");
      assertThat(chosen).isNotNull();
      out.add(chosen.getHost() + ":" + chosen.getPort());
      if (chosen instanceof FairwayServiceInstance f) {
        f.success();
      }
    }
    return out;
  }

  /** Polls {@code value} until {@code done} holds, for at most {@link #BOUND}; returns the last value. */
  private static <T> T await(String what, Supplier<T> value, Predicate<T> done) throws InterruptedException {
    long deadline = System.nanoTime() + BOUND.toNanos();
    T last = value.get();
    while (!done.test(last) && System.nanoTime() < deadline) {
      Thread.sleep(10);
      last = value.get();
    }
    assertThat(done.test(last)).as("%s within %s; last: %s", what, BOUND, last).isTrue();
    return last;
  }

  static Throwable cause(AssertableApplicationContext context) {
    Throwable t = context.getStartupFailure();
    assertThat(t).as("a startup failure").isNotNull();
    while (t != null && !(t instanceof FairwayConfigurationException)) {
      t = t.getCause();
    }
    assertThat(t).as("a FairwayConfigurationException in %s", context.getStartupFailure()).isNotNull();
    return t;
  }
}
