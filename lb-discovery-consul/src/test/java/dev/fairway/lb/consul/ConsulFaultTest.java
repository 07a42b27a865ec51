package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static dev.fairway.lb.consul.TestSupport.fast;
import static dev.fairway.lb.consul.TestSupport.ids;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.Fault;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every fault of the fake, end to end on real sockets and the JDK HTTP client: the last good list
 * stays and the source recovers when the fault clears. The exact request and backoff sequences are
 * asserted on fake time in {@link WatchLoopTest}; nothing here counts requests in a wall-clock window.
 */
class ConsulFaultTest {
  private final FakeConsul fake = FakeConsul.start();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stop() {
    fake.close();
  }

  private ConsulTargetSource start() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
    ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build();
    assertThat(ids(s.whenReady().get(5, TimeUnit.SECONDS))).containsExactly("o1", "o2");
    await(Duration.ofSeconds(2), "parked in a blocking query",
        () -> fake.requests("/v1/health/").stream().anyMatch(r -> r.target().contains("index=") && r.status() == 0));
    return s;
  }

  private double errors(String reason) {
    Counter c = registry.find("fairway.discovery.errors").tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
      "NO_CLUSTER_LEADER_500, http_500",
      "TOO_MANY_REQUESTS_429, http_429",
      "UNAVAILABLE_503, http_503",
      "PERMISSION_DENIED_403, http_403",
      "BAD_REQUEST_400, http_400",
      "INDEX_ZERO, missing_index",
      "INDEX_MISSING, missing_index",
      "INDEX_NON_NUMERIC, bad_index",
      "MALFORMED_JSON, malformed",
      "TRUNCATED_JSON, malformed",
      "NULL_BODY, null_body",
      "HTML_502, http_502",
      "HTML_200, malformed",
      "CLOSE_MID_REPLY, io",
  })
  void fault_keepsTheLastGoodList_andRecovers(Fault fault, String reason) throws Exception {
    try (ConsulTargetSource s = start()) {
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);

      fake.fault(fault);
      fake.touch("orders"); // wake the parked query; the next one meets the fault
      await(Duration.ofSeconds(3), "two " + reason + " errors", () -> errors(reason) >= 2);
      assertThat(ids(s.targets())).containsExactly("o1", "o2");
      assertThat(seen).hasSize(1);

      fake.register("orders", Instance.of("o3", "10.0.0.3", 8080));
      fake.clearFault();
      await(Duration.ofSeconds(3), "recovery", () -> ids(s.targets()).equals(List.of("o1", "o2", "o3")));
    }
  }

  @Test
  void stalledReply_timesOutAboveTheWait_keepsTheList_andRecovers() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders", Duration.ofSeconds(1)).meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      fake.fault(Fault.STALL);
      long faultStart = System.nanoTime();
      fake.touch("orders");

      // read timeout = 1 s wait + 62 ms jitter + 1 s margin
      await(Duration.ofSeconds(5), "a timeout", () -> errors("timeout") >= 1);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - faultStart)).isGreaterThanOrEqualTo(2000);
      assertThat(ids(s.targets())).containsExactly("o1");

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      fake.clearFault();
      await(Duration.ofSeconds(3), "recovery", () -> s.targets().size() == 2);
    }
  }

  @Test
  void agentDown_connectionRefused_thenBackOnTheSamePort() throws Exception {
    try (ConsulTargetSource s = start()) {
      fake.stopAgent();
      await(Duration.ofSeconds(3), "refused connections", () -> errors("connect") >= 2);
      assertThat(ids(s.targets())).containsExactly("o1", "o2");

      fake.register("orders", Instance.of("o3", "10.0.0.3", 8080));
      fake.startAgent();
      await(Duration.ofSeconds(3), "recovery", () -> s.targets().size() == 3);
    }
  }

  @Test
  void indexGoingBackwards_resetsTheWatch_andKeepsWorking() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    for (int i = 0; i < 5; i++) {
      fake.touch("orders");
    }
    try (ConsulTargetSource s = fast(fake, "orders", Duration.ofSeconds(1)).meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      fake.restoreIndex(3); // the client blocks on 16, waits out its 1 s, then sees 3

      await(Duration.ofSeconds(4), "backwards detected", () -> errors("index_backwards") == 1);
      assertThat(ids(s.targets())).containsExactly("o1");

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(2), "change after the reset", () -> s.targets().size() == 2);
      assertThat(errors("index_backwards")).isEqualTo(1);
    }
  }

  @Test
  void churningIndex_sameDataNotifiesNobody_andChangesAreStillSeen() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = ConsulTargetSource.builder("orders").environment(java.util.Map.of())
        .consulUrl(fake.url()).waitTime(Duration.ofSeconds(2)).rateLimit(2, Duration.ofMillis(50)).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);
      fake.fault(Fault.INDEX_CHURN);
      int before = fake.requests("/v1/health/").size();
      fake.touch("orders");
      await(Duration.ofSeconds(3), "five churned replies", () -> fake.requests("/v1/health/").size() - before >= 5);

      assertThat(seen).as("same data under new indexes notifies nobody").hasSize(1);
      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(2), "changes still seen while churning", () -> s.targets().size() == 2);
    }
  }

  @Test
  void noKnownLeader_repliesAreStillUsed() throws Exception {
    try (ConsulTargetSource s = start()) {
      fake.fault(Fault.NO_KNOWN_LEADER);
      fake.register("orders", Instance.of("o3", "10.0.0.3", 8080));

      await(Duration.ofSeconds(1), "o3", () -> s.targets().size() == 3);
      assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
    }
  }

  @Test
  void emptyReplyAfterNonEmpty_isHonoured_withAMetric() throws Exception {
    try (ConsulTargetSource s = start()) {
      fake.fault(Fault.EMPTY_LIST);
      fake.touch("orders");
      await(Duration.ofSeconds(1), "empty", () -> s.targets().isEmpty());
      assertThat(registry.get("fairway.discovery.emptied").counter().count()).isEqualTo(1.0);

      fake.clearFault();
      fake.touch("orders");
      await(Duration.ofSeconds(1), "back", () -> s.targets().size() == 2);
    }
  }

  @Test
  void warningKeepsWarningWeights_criticalAndMaintenanceBecomeUnhealthy_andBack() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080).withWeights(10, 2));
    fake.register("orders", Instance.of("o2", "10.0.0.2", 8080).withWeights(10, 2));
    try (ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(s.targets()).extracting(Target::weight).containsExactly(10, 10);

      fake.setStatus("orders", "o1", "warning");
      fake.setStatus("orders", "o2", "warning");
      await(Duration.ofSeconds(1), "warning weights", () -> s.targets().stream().allMatch(t -> t.weight() == 2));
      assertThat(s.targets()).allMatch(Target::healthy);

      fake.setStatus("orders", "o1", "critical");
      fake.setStatus("orders", "o2", "critical");
      await(Duration.ofSeconds(1), "all critical", () -> s.targets().stream().noneMatch(Target::healthy));
      assertThat(ids(s.targets())).as("still members, for panic mode").containsExactly("o1", "o2");
      assertThat(registry.get("fairway.discovery.emptied").counter().count()).isZero();

      fake.setStatus("orders", "o1", "passing");
      fake.setStatus("orders", "o2", "passing");
      await(Duration.ofSeconds(1), "passing again", () -> s.targets().stream().allMatch(Target::healthy));
      fake.maintenance("orders", "o2", true);
      await(Duration.ofSeconds(1), "o2 in maintenance",
          () -> s.targets().stream().filter(t -> !t.healthy()).map(Target::id).toList().equals(List.of("o2@node-o2")));
      fake.maintenance("orders", "o2", false);
      await(Duration.ofSeconds(1), "o2 out of maintenance", () -> s.targets().stream().allMatch(Target::healthy));
      assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
    }
  }

  @Test
  void oddEntries_emptyAddress_ipv6_duplicateIds_noPort_shuffledOrder() throws Exception {
    fake.register("orders", Instance.of("a", "10.0.0.1", 8080).withServiceAddress("").onNode("n1", "10.0.1.1"));
    fake.register("orders", Instance.of("v6", "2001:db8::5", 8080));
    fake.register("orders", Instance.of("dup", "10.0.0.3", 8080).onNode("n3", "10.0.0.3"));
    fake.register("orders", Instance.of("dup", "10.0.0.4", 8080).onNode("n4", "10.0.0.4"));
    fake.register("orders", Instance.of("noport", "10.0.0.5", null));
    try (ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build()) {
      List<Target> t = s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);

      assertThat(t).extracting(Target::id).containsExactly("a@n1", "dup@n3", "dup@n4", "v6@node-v6");
      assertThat(t).filteredOn(x -> x.id().equals("a@n1")).extracting(Target::host).containsExactly("10.0.1.1");
      assertThat(t).filteredOn(x -> x.id().equals("v6@node-v6")).extracting(Target::authority)
          .containsExactly("[2001:db8::5]:8080");
      assertThat(registry.get("fairway.discovery.skipped").tags("reason", "bad_port").counter().count()).isEqualTo(1.0);

      int before = fake.requests("/v1/health/").size();
      for (int i = 0; i < 5; i++) {
        fake.touch("orders"); // same entries, shuffled by the fake
        int n = i;
        await(Duration.ofSeconds(2), "reply " + i, () -> fake.requests("/v1/health/").size() - before >= n + 1);
      }
      assertThat(seen).as("reordered replies are no change").hasSize(1);
    }
  }

  @Test
  void nodeWithoutWanTaggedAddress_doesNotFreezeTheService() throws Exception {
    fake.registerRaw("orders", "[{\"Node\":{\"Node\":\"catalog-node\",\"Address\":\"10.0.0.9\",\"TaggedAddresses\":{}},"
        + "\"Service\":{\"ID\":\"old\",\"Service\":\"orders\",\"Address\":\"\",\"Port\":8080},\"Checks\":[]}]");
    try (ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build()) {
      assertThat(s.whenReady().get(5, TimeUnit.SECONDS)).extracting(Target::id).containsExactly("old@catalog-node");
      fake.register("orders", Instance.of("new", "10.0.0.10", 8080));
      await(Duration.ofSeconds(2), "a new instance appears", () -> s.targets().size() == 2);
      fake.deregister("orders", "old");
      await(Duration.ofSeconds(2), "a dead one leaves", () -> ids(s.targets()).equals(List.of("new")));
      assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
    }
  }
}
