package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static dev.fairway.lb.consul.TestSupport.fast;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code consul maint}, through the fake's real response shape (a critical {@code
 * _service_maintenance:<id>} check, or a {@code _node_maintenance} node check listed with every
 * instance of the node): such an instance leaves the routable set as any critical one does, and comes
 * back when maintenance ends.
 */
class MaintenanceTest {
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  @Test
  void serviceAndNodeMaintenance_leaveTheRoutableSet_andComeBack() throws Exception {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081).onNode("n1", "10.0.0.1"));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082).onNode("n2", "10.0.0.2"));
    fake.register("orders", Instance.of("o3", "127.0.0.1", 18083).onNode("n3", "10.0.0.3"));
    fake.register("orders", Instance.of("o4", "127.0.0.1", 18084).onNode("n4", "10.0.0.4"));
    fake.register("orders", Instance.of("o5", "127.0.0.1", 18085).onNode("n5", "10.0.0.5"));
    fake.register("billing", Instance.of("b3", "127.0.0.1", 18090).onNode("n3", "10.0.0.3"));
    // Five instances: with two in maintenance, 60% are healthy, above the balancer's panic threshold (50%).
    try (ConsulTargetSource orders = fast(fake, "orders").closeness(false).build();
        ConsulTargetSource billing = fast(fake, "billing").closeness(false).build();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).strategy(Strategy.roundRobin()).build()) {
      orders.whenReady().get(5, TimeUnit.SECONDS);
      billing.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(picked(lb)).containsExactlyInAnyOrder("o1@n1", "o2@n2", "o3@n3", "o4@n4", "o5@n5");

      fake.maintenance("orders", "o2", true);
      await(Duration.ofSeconds(5), "o2 in service maintenance", () -> unhealthy(orders).equals(Set.of("o2@n2")));
      await(Duration.ofSeconds(5), "o2 not picked", () -> picked(lb).equals(Set.of("o1@n1", "o3@n3", "o4@n4", "o5@n5")));

      fake.nodeMaintenance("n3", true);
      await(Duration.ofSeconds(5), "n3 in node maintenance",
          () -> unhealthy(orders).equals(Set.of("o2@n2", "o3@n3")));
      await(Duration.ofSeconds(5), "n3's other services too", () -> unhealthy(billing).equals(Set.of("b3@n3")));
      await(Duration.ofSeconds(5), "o2 and o3 not picked", () -> picked(lb).equals(Set.of("o1@n1", "o4@n4", "o5@n5")));

      fake.maintenance("orders", "o2", false);
      fake.nodeMaintenance("n3", false);
      await(Duration.ofSeconds(5), "out of maintenance", () -> unhealthy(orders).isEmpty());
      await(Duration.ofSeconds(5), "all picked again", () -> picked(lb).equals(Set.of("o1@n1", "o2@n2", "o3@n3", "o4@n4", "o5@n5")));
    }
  }

  @Test
  void theFakesMaintenanceChecks_haveConsulsShape() throws Exception {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081).onNode("n1", "10.0.0.1"));
    fake.maintenance("orders", "o1", true);
    fake.nodeMaintenance("n1", true);
    String body = TestSupport.httpGet(fake.url() + "/v1/health/service/orders");
    assertThat(body).contains("\"CheckID\":\"_service_maintenance:o1\",\"Name\":\"Service Maintenance Mode\","
        + "\"Status\":\"critical\",\"Notes\":\"Maintenance mode is enabled for this service, but no reason was"
        + " provided. This is a default message.\",\"Output\":\"\",\"ServiceID\":\"o1\",\"ServiceName\":\"orders\"");
    assertThat(body).contains("\"CheckID\":\"_node_maintenance\",\"Name\":\"Node Maintenance Mode\","
        + "\"Status\":\"critical\",\"Notes\":\"Maintenance mode is enabled for this node, but no reason was provided."
        + " This is a default message.\",\"Output\":\"\",\"ServiceID\":\"\",\"ServiceName\":\"\"");
    assertThat(body).contains("\"Type\":\"maintenance\"");
  }

  private static Set<String> unhealthy(ConsulTargetSource s) {
    Set<String> ids = new HashSet<>();
    for (Target t : s.targets()) {
      if (!t.healthy()) {
        ids.add(t.id());
      }
    }
    return ids;
  }

  private static Set<String> picked(LoadBalancer lb) {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      Pick p;
      try {
        p = lb.pick();
      } catch (dev.fairway.lb.NoTargetAvailableException e) {
        throw new AssertionError(e);
      }
      ids.add(p.target().id());
      p.success();
    }
    return ids;
  }
}
