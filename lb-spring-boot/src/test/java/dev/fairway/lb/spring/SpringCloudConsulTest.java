package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The real Spring Cloud Consul discovery (its ConsulDiscoveryClient, Spring Cloud LoadBalancer's
 * cached supplier) against the fake Consul agent on loopback, serving Consul's real reply shapes
 * ({@code health-service-redis.json}: Meta, Meta null, tags, Weights, an empty Service.Address, a
 * warning instance). Two things are shown: without {@code fairway.consul.*}, the instances Spring
 * Cloud Consul hands the starter keep working, with Meta's {@code weight} and {@code zone} as the
 * target's weight and zone (Spring Cloud Consul's model drops Consul's {@code Weights}); with
 * {@code fairway.consul.enabled=true}, a deregistered instance leaves Fairway's balancer as soon as
 * Consul knows it while Spring's cached supplier still serves it.
 */
class SpringCloudConsulTest {
  private static final Duration BOUND = Duration.ofSeconds(10);

  private final FakeConsul fake = FakeConsul.start();
  private ConfigurableApplicationContext context;

  @AfterEach
  void stop() {
    if (context != null) {
      context.close();
    }
    fake.close();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  /** A client application with Spring Cloud Consul's discovery on the fake agent; {@code args} win over every file. */
  private ConfigurableApplicationContext start(String... args) {
    List<String> all = new ArrayList<>(List.of(
        "--spring.main.web-application-type=none",
        "--spring.application.name=client",
        "--spring.cloud.consul.enabled=true",
        "--spring.cloud.consul.host=127.0.0.1",
        "--spring.cloud.consul.port=" + fake.port(),
        "--spring.cloud.consul.discovery.register=false",
        "--spring.cloud.consul.discovery.catalog-services-watch.enabled=false"));
    all.addAll(List.of(args));
    context = new SpringApplicationBuilder(App.class).run(all.toArray(String[]::new));
    return context;
  }

  private static String fixture() throws IOException {
    try (InputStream in = SpringCloudConsulTest.class.getResourceAsStream("/health-service-redis.json")) {
      assertThat(in).as("health-service-redis.json from lb-discovery-consul's test-jar").isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** {@code n} picks through Spring Cloud LoadBalancer's client, each completed at once. */
  private List<String> choose(String service, int n) {
    LoadBalancerClient client = context.getBean(LoadBalancerClient.class);
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ServiceInstance chosen = client.choose(service);
      assertThat(chosen).isInstanceOf(FairwayServiceInstance.class);
      ids.add(chosen.getInstanceId());
      ((FairwayServiceInstance) chosen).success();
    }
    return ids;
  }

  private LoadBalancer balancer(String service) {
    LoadBalancer lb = context.getBean(FairwayBalancers.class).balancers().get(service);
    assertThat(lb).as("Fairway's balancer of %s", service).isNotNull();
    return lb;
  }

  /** id -> "host:port weight=W zone=Z" of every target the balancer holds. */
  private static Map<String, String> describe(LoadBalancer lb) {
    Map<String, String> out = new TreeMap<>();
    for (TargetStatus s : lb.status()) {
      Target t = s.target();
      out.put(t.id(), t.host() + ":" + t.port() + " weight=" + t.weight() + " zone=" + t.zone());
    }
    return out;
  }

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

  @Test
  void springCloudConsulInstances_onConsulsRealShapes_keepMetasWeightAndZone() throws Exception {
    fake.registerRaw("redis", fixture());
    fake.register("redis", Instance.of("redis-4", "127.0.0.1", 8004).withTags("weight=9")
        .withMeta(Map.of("weight", "5", "zone", "eu-1")).withWeights(7, 1));
    fake.register("redis", Instance.of("redis-5", "127.0.0.1", 8005).withMeta(Map.of("weight", "zero")));
    start();
    assertThat(context.getBean(DiscoveryClient.class).getInstances("redis")).hasSize(5);

    assertThat(choose("redis", 8)).doesNotContain("redis-5");
    // Spring Cloud Consul's instance: Service.ID as the id, Service.Address else Node.Address, Meta as metadata.
    assertThat(describe(balancer("redis"))).containsExactlyEntriesOf(new TreeMap<>(Map.of(
        "redis", "10.1.10.12:8000 weight=1 zone=",
        "redis-2", "10.1.10.13:8000 weight=1 zone=",
        "redis-3", "10.1.10.14:8001 weight=1 zone=",
        "redis-4", "127.0.0.1:8004 weight=5 zone=eu-1")));
    Target first = balancer("redis").status().stream().map(TargetStatus::target)
        .filter(t -> t.id().equals("redis")).findFirst().orElseThrow();
    assertThat(first.metadata()).containsEntry("redis_version", "4.0");
    // Consul's Weights (10 for "redis", 7 for "redis-4") and tags never reach Spring's instances: Meta's weight decides.
  }

  @Test
  void withFairwayConsul_theSameShapes_carryConsulsWeights() throws Exception {
    fake.registerRaw("redis", fixture());
    start("--fairway.consul.enabled=true", "--fairway.consul.address=" + fake.url());
    choose("redis", 1);
    // Fairway's watcher reads Weights: Passing 10 for the passing instances, Warning 1 for redis-3 in warning.
    Map<String, String> targets = await("the fixture's three instances", () -> describe(balancer("redis")),
        m -> m.size() == 3);
    assertThat(targets).containsExactlyEntriesOf(new TreeMap<>(Map.of(
        "redis-2@node-2", "10.1.10.13:8000 weight=1 zone=",
        "redis-3@node-3", "10.1.10.14:8001 weight=1 zone=",
        "redis@foobar", "10.1.10.12:8000 weight=10 zone=")));
  }

  @Test
  void deregisteredInstance_leavesFairwaysBalancerAtOnce_whileSpringsCachedSupplierStillServesIt() throws Exception {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082));
    start("--fairway.consul.enabled=true", "--fairway.consul.address=" + fake.url());
    ServiceInstanceListSupplier spring = context.getBean(LoadBalancerClientFactory.class)
        .getInstance("orders", ServiceInstanceListSupplier.class);
    assertThat(ids(spring)).containsExactly("o1", "o2"); // read once: cached from here on
    assertThat(new TreeSet<>(choose("orders", 6))).containsExactly("o1@node-o1", "o2@node-o2");

    fake.deregister("orders", "o2");
    await("o2 gone from Fairway's balancer", () -> new TreeSet<>(targetIds(balancer("orders"))),
        Set.of("o1@node-o1")::equals);
    assertThat(choose("orders", 6)).containsOnly("o1@node-o1");
    // Spring's supplier (35 s cache by default) still lists it: a round robin over it would still send calls there.
    assertThat(ids(spring)).containsExactly("o1", "o2");
  }

  private static List<String> ids(ServiceInstanceListSupplier supplier) {
    List<ServiceInstance> list = supplier.get().blockFirst(BOUND);
    assertThat(list).isNotNull();
    return list.stream().map(ServiceInstance::getInstanceId).sorted().toList();
  }

  private static List<String> targetIds(LoadBalancer lb) {
    return lb.status().stream().map(s -> s.target().id()).toList();
  }
}
