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
 * Every fault of the fake: the last good list stays, the loop backs off (counted from the fake's
 * request log, with the token bucket opened wide so that only the backoff can hold the rate), and it
 * recovers when the fault clears.
 */
class ConsulFaultTest {
  /** Requests one faulted second may see; a loop without backoff would make hundreds. */
  private static final int MAX_REQUESTS_PER_FAULTED_SECOND = 18;

  private final FakeConsul fake = FakeConsul.start();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stop() {
    fake.close();
  }

  private ConsulTargetSource start() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
    ConsulTargetSource s = fast(fake, "orders").rateLimit(1000, 1000).meterRegistry(registry).build();
    assertThat(ids(s.whenReady().get(5, TimeUnit.SECONDS))).containsExactly("o1", "o2");
    TestSupport.sleep(100); // parked in a blocking query now
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
  void fault_keepsTheLastGoodList_backsOff_andRecovers(Fault fault, String reason) throws Exception {
    try (ConsulTargetSource s = start()) {
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);

      fake.fault(fault);
      long faultStart = System.nanoTime();
      fake.touch("orders"); // wake the parked query; the next one meets the fault
      TestSupport.sleep(1000);

      assertThat(ids(s.targets())).containsExactly("o1", "o2");
      assertThat(seen).hasSize(1);
      assertThat(errors(reason)).isGreaterThanOrEqualTo(1);
      int faulted = fake.requestsSince(faultStart).size();
      assertThat(faulted).as("requests in the faulted second").isBetween(2, MAX_REQUESTS_PER_FAULTED_SECOND);

      fake.register("orders", Instance.of("o3", "10.0.0.3", 8080));
      fake.clearFault();
      Duration recovered = await(Duration.ofSeconds(3), "recovery",
          () -> ids(s.targets()).equals(List.of("o1", "o2", "o3")));
      System.out.printf("%-22s %-14s %2d requests in the faulted second, recovered %4d ms after the fault cleared%n",
          fault, reason, faulted, recovered.toMillis());
    }
  }

  @Test
  void stalledReply_timesOutAboveTheWait_keepsTheList_andRecovers() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders", Duration.ofSeconds(1)).rateLimit(1000, 1000)
        .meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      TestSupport.sleep(100);
      fake.fault(Fault.STALL);
      long faultStart = System.nanoTime();
      fake.touch("orders");

      // read timeout = 1 s wait + 62 ms jitter + 1 s margin
      await(Duration.ofSeconds(4), "a timeout", () -> errors("timeout") >= 1);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - faultStart)).isGreaterThanOrEqualTo(2000);
      assertThat(ids(s.targets())).containsExactly("o1");
      assertThat(fake.requestsSince(faultStart).size()).isLessThanOrEqualTo(3);

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      fake.clearFault();
      await(Duration.ofSeconds(3), "recovery", () -> s.targets().size() == 2);
    }
  }

  @Test
  void agentDown_connectionRefused_thenBackOnTheSamePort() throws Exception {
    try (ConsulTargetSource s = start()) {
      long downAt = System.nanoTime();
      fake.stopAgent();
      TestSupport.sleep(1000);

      assertThat(ids(s.targets())).containsExactly("o1", "o2");
      assertThat(errors("connect")).as("connection refused").isBetween(2.0, (double) MAX_REQUESTS_PER_FAULTED_SECOND);
      assertThat(fake.requestsSince(downAt)).isEmpty();

      fake.register("orders", Instance.of("o3", "10.0.0.3", 8080));
      fake.startAgent();
      Duration recovered = await(Duration.ofSeconds(3), "recovery", () -> s.targets().size() == 3);
      System.out.printf("agent down: %.0f refused connects in 1 s, recovered %d ms after restart%n",
          errors("connect"), recovered.toMillis());
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
      long start = System.nanoTime();
      fake.restoreIndex(3); // the client blocks on 16, waits out its 1 s, then sees 3

      await(Duration.ofSeconds(3), "backwards detected", () -> errors("index_backwards") == 1);
      assertThat(ids(s.targets())).containsExactly("o1");

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(1), "change after the reset", () -> s.targets().size() == 2);
      assertThat(fake.requestsSince(start).size()).isLessThanOrEqualTo(8);
      assertThat(errors("index_backwards")).isEqualTo(1);
    }
  }

  @Test
  void churningIndex_isHeldToTheTokenBucketRate() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders").build()) { // default bucket: burst 5, 5 per second
      s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);
      fake.fault(Fault.INDEX_CHURN);
      long start = System.nanoTime();
      fake.touch("orders");
      TestSupport.sleep(2000);
      int requests = fake.requestsSince(start).size();

      assertThat(requests).as("burst 5 + 5/s * 2 s, plus slack").isBetween(5, 17);
      assertThat(seen).as("same data under new indexes notifies nobody").hasSize(1);
      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(1), "changes still seen while churning", () -> s.targets().size() == 2);
      System.out.printf("churning index: %d requests in 2 s%n", requests);
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
  void allCritical_empties_onlyWarning_keepsWarningWeights_maintenance_drops() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080).withWeights(10, 2));
    fake.register("orders", Instance.of("o2", "10.0.0.2", 8080).withWeights(10, 2));
    try (ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(s.targets()).extracting(Target::weight).containsExactly(10, 10);

      fake.setStatus("orders", "o1", "warning");
      fake.setStatus("orders", "o2", "warning");
      await(Duration.ofSeconds(1), "warning weights", () -> s.targets().stream().allMatch(t -> t.weight() == 2));
      assertThat(ids(s.targets())).containsExactly("o1", "o2");

      fake.setStatus("orders", "o1", "critical");
      fake.setStatus("orders", "o2", "critical");
      await(Duration.ofSeconds(1), "all critical", () -> s.targets().isEmpty());
      assertThat(registry.get("fairway.discovery.emptied").counter().count()).isEqualTo(1.0);

      fake.setStatus("orders", "o1", "passing");
      fake.setStatus("orders", "o2", "passing");
      await(Duration.ofSeconds(1), "passing again", () -> s.targets().size() == 2);
      fake.maintenance("orders", "o2", true);
      await(Duration.ofSeconds(1), "o2 in maintenance", () -> ids(s.targets()).equals(List.of("o1")));
      fake.maintenance("orders", "o2", false);
      await(Duration.ofSeconds(1), "o2 out of maintenance", () -> s.targets().size() == 2);
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

      assertThat(ids(t)).containsExactly("a", "dup@n3", "dup@n4", "v6");
      assertThat(t).filteredOn(x -> x.id().equals("a")).extracting(Target::host).containsExactly("10.0.1.1");
      assertThat(t).filteredOn(x -> x.id().equals("v6")).extracting(Target::authority)
          .containsExactly("[2001:db8::5]:8080");
      assertThat(registry.get("fairway.discovery.skipped").tags("reason", "bad_port").counter().count()).isEqualTo(1.0);

      for (int i = 0; i < 5; i++) {
        fake.touch("orders"); // same entries, shuffled by the fake
        TestSupport.sleep(30);
      }
      TestSupport.sleep(300);
      assertThat(seen).as("reordered replies are no change").hasSize(1);
    }
  }
}
