package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.PeerPosition;
import dev.fairway.lb.Subset;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.consul.ConsulDiscovery;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

/**
 * {@code fairway.consul.*} in a Boot context, against the fake Consul agent on loopback: every
 * balancer, on the Spring Cloud LoadBalancer path and the OkHttp path, is fed by Fairway's own
 * watcher (blocking queries), takes closeness from Consul's network coordinates, and subsets by this
 * application's own registration. Spring's simple discovery lists "orders" at a port nothing serves,
 * so a pick that came from it would show.
 */
class ConsulFeedTest {
  private static final double[] AGENT = {0.001, 0, 0, 0, 0, 0, 0, 0};
  private static final double[] NEAR = {0.001, 0.001, 0, 0, 0, 0, 0, 0};
  private static final double[] FAR = {0.001, 0.020, 0, 0, 0, 0, 0, 0};
  private static final Duration BOUND = Duration.ofSeconds(10);

  private final FakeConsul fake = FakeConsul.start();
  private final Instances instances = new Instances();

  @AfterEach
  void stop() throws IOException {
    instances.close();
    fake.close();
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(
            FairwayAutoConfiguration.class,
            FairwayConsulAutoConfiguration.class,
            FairwayLoadBalancerAutoConfiguration.class,
            FairwayOkHttpAutoConfiguration.class,
            org.springframework.cloud.commons.util.UtilAutoConfiguration.class,
            org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.loadbalancer.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration.class))
        .withPropertyValues("fairway.consul.enabled=true", "fairway.consul.address=" + fake.url(),
            "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:1");
  }

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

  /** Ports of {@code n} picks made through Spring Cloud LoadBalancer's client, one after another, each released. */
  private static List<Integer> choose(AssertableApplicationContext context, int n) {
    LoadBalancerClient client = context.getBean(LoadBalancerClient.class);
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ServiceInstance chosen = client.choose("orders");
      assertThat(chosen).isInstanceOf(FairwayServiceInstance.class);
      ports.add(chosen.getPort());
      ((FairwayServiceInstance) chosen).success();
    }
    return ports;
  }

  @Test
  void consulEnabled_theSpringBalancerWatchesConsul_andADeregisteredInstanceLeavesAtOnce() throws Exception {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082));
    runner().run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(ConsulDiscovery.class).hasSingleBean(ConsulTargetFeed.class);
      LoadBalancer lb = springBalancer(context, "orders");
      assertThat(choose(context, 4)).containsOnly(18081, 18082);
      assertThat(ids(lb)).containsExactly("o1@node-o1", "o2@node-o2");

      fake.deregister("orders", "o2");
      await("o2 gone from the balancer", () -> ids(lb), Set.of("o1@node-o1")::equals);
      assertThat(choose(context, 4)).containsOnly(18081);
      // Blocking queries: the first read, then one that waited for the change (index and wait).
      assertThat(fake.requests("/v1/health/service/orders")).extracting(FakeConsul.SeenRequest::target)
          .contains("/v1/health/service/orders").anyMatch(t -> t.contains("index=") && t.contains("wait=5m"));
    });
  }

  @Test
  void okHttpPath_isFedByConsul_andTheCoordinateCloserInstanceTakesTheCalls() throws Exception {
    int near = instances.ok("near").getPort();
    int far = instances.ok("far").getPort();
    fake.agentNode("agent-one");
    fake.setCoordinate("agent-one", AGENT, 0.2, 0, 0.0001);
    fake.setCoordinate("n-near", NEAR, 0.2, 0, 0.0001);
    fake.setCoordinate("n-far", FAR, 0.2, 0, 0.0001);
    fake.register("orders", Instance.of("far", "127.0.0.1", far).onNode("n-far", "127.0.0.1"));
    fake.register("orders", Instance.of("near", "127.0.0.1", near).onNode("n-near", "127.0.0.1"));
    runner().withPropertyValues("fairway.okhttp.enabled=true", "fairway.services.orders.strategy=least-connections")
        .run(context -> {
          assertThat(context).hasNotFailed();
          LoadBalancer okhttp = context.getBean(FairwayOkHttp.class).balancers().get("orders");
          LoadBalancer spring = springBalancer(context, "orders");
          for (LoadBalancer lb : List.of(okhttp, spring)) {
            await("round-trip times from the coordinates", () -> rtts(lb), m -> m.size() == 2 && !m.containsValue(-1L));
          }
          assertThat(rtts(spring).get("near@n-near")).isLessThan(rtts(spring).get("far@n-far"));

          OkHttpClient client = context.getBean(OkHttpClient.class);
          List<String> bodies = new ArrayList<>();
          for (int i = 0; i < 12; i++) {
            bodies.add(get(client, "http://orders/x"));
          }
          assertThat(bodies).containsOnly("near").hasSize(12);
          assertThat(choose(context, 12)).containsOnly(near);

          fake.deregister("orders", "near");
          await("near gone from the OkHttp path's balancer", () -> ids(okhttp), Set.of("far@n-far")::equals);
          assertThat(get(client, "http://orders/x")).isEqualTo("far");
        });
  }

  private static Map<String, Long> rtts(LoadBalancer lb) {
    Map<String, Long> out = new TreeMap<>();
    for (TargetStatus s : lb.status()) {
      long n = s.target().roundTripNanos();
      out.put(s.target().id(), n < 0 ? -1 : n / 1000);
    }
    return out;
  }

  private static String get(OkHttpClient client, String url) throws IOException {
    try (Response r = client.newCall(new Request.Builder().url(url).build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
      return r.body().string();
    }
  }

  /** A Spring Cloud service registration, as Spring Cloud Consul's ConsulAutoRegistration gives it. */
  private static Registration registration(String service, String instanceId) {
    return new Registration() {
      @Override
      public String getInstanceId() {
        return instanceId;
      }

      @Override
      public String getServiceId() {
        return service;
      }

      @Override
      public String getHost() {
        return "127.0.0.1";
      }

      @Override
      public int getPort() {
        return 8080;
      }

      @Override
      public boolean isSecure() {
        return false;
      }

      @Override
      public URI getUri() {
        return URI.create("http://127.0.0.1:8080");
      }

      @Override
      public Map<String, String> getMetadata() {
        return Map.of();
      }
    };
  }

  /** The window ids a client at {@code position} holds over {@code lb}'s targets, by the SDK's own arithmetic. */
  private static Set<String> expectedWindow(LoadBalancer lb, int size, PeerPosition position) {
    List<Target> targets = lb.status().stream().map(TargetStatus::target).toList();
    Set<String> out = new TreeSet<>();
    Subset.of(size, PeerCoordinate.fixed(0, 1)).withFloor(1).shares(targets, position)
        .forEach((t, share) -> out.add(t.id()));
    return out;
  }

  private static Set<String> window(LoadBalancer lb) {
    Set<String> out = new TreeSet<>();
    lb.status().stream().filter(s -> s.subsetShare() > 0).forEach(s -> out.add(s.target().id()));
    return out;
  }

  @Test
  void subset_isPlacedByThisApplicationsRegistration_andWindowsFollowRegistrations() throws Exception {
    List<Instance> orders = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      orders.add(Instance.of("o" + i, "127.0.0.1", 18080 + i));
    }
    fake.registerAll("orders", orders);
    fake.register("checkout", Instance.of("checkout-1", "127.0.0.1", 9001));
    fake.register("checkout", Instance.of("checkout-2", "127.0.0.1", 9002));
    fake.register("checkout", Instance.of("checkout-3", "127.0.0.1", 9003));
    runner().withBean(Registration.class, () -> registration("checkout", "checkout-2"))
        .withPropertyValues("fairway.services.orders.subset.size=2", "fairway.services.orders.subset.floor=1",
            "fairway.services.orders.strategy=round-robin")
        .run(context -> {
          assertThat(context).hasNotFailed();
          LoadBalancer lb = springBalancer(context, "orders");
          await("six targets", () -> ids(lb).size(), n -> n == 6);
          Set<String> second = expectedWindow(lb, 2, new PeerPosition(1, 3));
          assertThat(second).hasSize(2);
          await("the window of checkout-2 as 2nd of 3", () -> window(lb), second::equals);
          Set<Integer> picked = new TreeSet<>(choose(context, 8));
          assertThat(picked).hasSize(2).allSatisfy(p -> assertThat(second).contains("o" + (p - 18080) + "@node-o" + (p - 18080)));

          // A peer registers before it in sort order: checkout-2 is now 3rd of 4, and its window moves.
          fake.register("checkout", Instance.of("checkout-0", "127.0.0.1", 9000));
          Set<String> third = expectedWindow(lb, 2, new PeerPosition(2, 4));
          assertThat(third).isNotEqualTo(second);
          await("the window of checkout-2 as 3rd of 4", () -> window(lb), third::equals);

          // It deregisters itself: no place, so no subset (every target).
          fake.deregister("checkout", "checkout-2");
          await("no window without a place", () -> window(lb), ids(lb)::equals);
        });
  }

  @Test
  void subset_withInstanceIdProperty_placesWithoutARegistration() throws Exception {
    for (int i = 1; i <= 4; i++) {
      fake.register("orders", Instance.of("o" + i, "127.0.0.1", 18080 + i));
    }
    fake.register("checkout", Instance.of("a", "127.0.0.1", 9001));
    fake.register("checkout", Instance.of("b", "127.0.0.1", 9002));
    runner().withPropertyValues("spring.application.name=checkout", "fairway.consul.instance-id=b",
        "fairway.services.orders.subset.size=2", "fairway.services.orders.subset.floor=1").run(context -> {
          assertThat(context).hasNotFailed();
          LoadBalancer lb = springBalancer(context, "orders");
          await("four targets", () -> ids(lb).size(), n -> n == 4);
          Set<String> expected = expectedWindow(lb, 2, new PeerPosition(1, 2));
          await("the window of b as 2nd of 2", () -> window(lb), expected::equals);
        });
  }

  @Test
  void subset_withNoPlaceToTakeItFrom_failsStartup_namingTheProperty() {
    runner().withPropertyValues("fairway.services.orders.subset.size=3").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.services.orders.subset.size: 3 (expected: this"
            + " application's place among its peers in Consul: fairway.consul.instance-id, or a Spring Cloud"
            + " service registration such as Spring Cloud Consul's)"));
    runner().withPropertyValues("fairway.consul.enabled=false", "fairway.default.subset.size=3").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.default.subset.size: 3 (expected: with"
            + " fairway.consul.enabled=true and lb-discovery-consul, which place this application among its peers)"));
    runner().withPropertyValues("fairway.consul.instance-id=me", "spring.application.name=checkout",
        "fairway.services.orders.subset.size=0").run(context ->
            assertThat(cause(context).getMessage()).isEqualTo("fairway.services.orders.subset.size: 0 (expected: 1..1000000)"));
    runner().withPropertyValues("fairway.consul.instance-id=me", "spring.application.name=checkout",
        "fairway.services.orders.subset.floor=2").run(context ->
            assertThat(cause(context).getMessage()).isEqualTo("fairway.services.orders.subset.floor: 2 set without"
                + " fairway.services.orders.subset.size (expected: both, or size alone)"));
  }

  @Test
  void badConsulSettings_failStartup_namingThePropertyAndTheValue() {
    runner().withPropertyValues("fairway.consul.address=ftp://consul:21").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo(
            "fairway.consul.address: \"ftp://consul:21\" (expected: http(s)://host:port)"));
    runner().withPropertyValues("fairway.consul.token=t", "fairway.consul.token-file=/nonexistent").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo(
            "fairway.consul.token-file: /nonexistent set with fairway.consul.token (expected: one or the other)"));
    runner().withPropertyValues("fairway.consul.token-file=/nonexistent/token").run(context ->
        assertThat(cause(context).getMessage()).startsWith("fairway.consul: tokenFile: \"/nonexistent/token\""));
    runner().withPropertyValues("fairway.consul.tls.client-certificate=/tmp/c.pem").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.consul.tls.client-key: not set while"
            + " fairway.consul.tls.client-certificate is /tmp/c.pem (expected: both or neither)"));
    runner().withPropertyValues("fairway.consul.instance-id=", "spring.application.name=checkout").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.consul.instance-id: \"\" (expected: the"
            + " Service.ID this application registered in Consul, or Service.ID@Node)"));
    runner().withPropertyValues("fairway.consul.instance-id=c-1", "fairway.consul.service-name=a/b").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.consul.service-name: \"a/b\""
            + " (expected: a Consul service name, non-blank, no '/' or surrounding spaces)"));
    runner().withPropertyValues("fairway.consul.datacenter=").run(context ->
        assertThat(cause(context).getMessage()).isEqualTo("fairway.consul.datacenter: \"\" (expected: a datacenter name)"));
  }

  @Test
  void backsOff_whenNotEnabled_orWithoutLbDiscoveryConsul() {
    runner().withPropertyValues("fairway.consul.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(ConsulDiscovery.class).doesNotHaveBean(TargetFeed.class);
      assertThat(choose(context, 1)).containsExactly(1); // the simple discovery's list
    });
    runner().withClassLoader(new FilteredClassLoader("dev.fairway.lb.consul")).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(TargetFeed.class);
      assertThat(context.getBean(LoadBalancerClientFactory.class).getInstance("orders"))
          .isInstanceOf(FairwayReactorLoadBalancer.class);
    });
  }

  @Test
  void anApplicationsOwnConsulDiscovery_wins() {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081));
    runner().withPropertyValues("fairway.consul.address=http://127.0.0.1:1")
        .withBean("myConsul", ConsulDiscovery.class, () -> ConsulDiscovery.builder().consulUrl(fake.url()).build(),
            bd -> bd.setDestroyMethodName("close"))
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(ConsulDiscovery.class).hasBean("myConsul");
          LoadBalancer lb = springBalancer(context, "orders");
          await("o1 from the application's own discovery", () -> ids(lb), Set.of("o1@node-o1")::equals);
        });
  }

  private static Throwable cause(AssertableApplicationContext context) {
    Throwable t = context.getStartupFailure();
    assertThat(t).as("a startup failure").isNotNull();
    while (t != null && !(t instanceof FairwayConfigurationException)) {
      t = t.getCause();
    }
    assertThat(t).as("a FairwayConfigurationException in %s", context.getStartupFailure()).isNotNull();
    return t;
  }
}
