package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.awaitValue;
import static dev.fairway.lb.consul.TestSupport.fast;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * End to end on real sockets: the fake agent serves {@code /v1/agent/self} and
 * {@code /v1/coordinate/nodes} for three nodes (the agent's and two others) with instances on each, and
 * the targets that reach a {@link LoadBalancer} carry the round-trip times Serf's formula gives.
 */
class ConsulClosenessTest {
  private static final double[] AGENT = {0.001, 0, 0, 0, 0, 0, 0, 0};
  private static final double[] N1 = {0.001, 0.002, 0, 0, 0, 0, 0, 0};
  private static final double[] N2 = {0.004, 0.004, 0, 0, 0, 0, 0, 0};

  private final FakeConsul fake = FakeConsul.start();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stop() {
    fake.close();
  }

  private void threeNodes() {
    fake.agentNode("agent-one");
    fake.setCoordinate("agent-one", AGENT, 0.2, 0, 0.0001);
    fake.setCoordinate("n1", N1, 0.2, 0, 0.0001);
    fake.setCoordinate("n2", N2, 0.2, -0.0003, 0.0002);
    fake.register("orders", Instance.of("o0", "127.0.0.1", 18080).onNode("agent-one", "127.0.0.1"));
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081).onNode("n1", "127.0.0.1"));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082).onNode("n2", "127.0.0.1"));
  }

  private ConsulTargetSource source() {
    return fast(fake, "orders").meterRegistry(registry)
        .coordinatePolling(Duration.ofMillis(50), Duration.ofSeconds(2)).build();
  }

  /** Target id -> round-trip time in microseconds (-1 unknown), as the balancer holds them. */
  private static Map<String, Long> rtts(LoadBalancer lb) {
    Map<String, Long> out = new TreeMap<>();
    for (TargetStatus s : lb.status()) {
      long n = s.target().roundTripNanos();
      out.put(s.target().id(), n < 0 ? -1 : n / 1000);
    }
    return out;
  }

  private Map<String, Long> await(LoadBalancer lb, String what, Map<String, Long> expected) {
    return awaitValue(Duration.ofSeconds(5), what, () -> rtts(lb), expected::equals);
  }

  private double skipped(String reason) {
    Counter c = registry.find("fairway.discovery.skipped").tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void targetsReachingTheBalancer_carryTheRoundTripTimesOfTheirNodes() throws Exception {
    threeNodes();
    try (ConsulTargetSource source = source(); LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build()) {
      source.whenReady().get(5, TimeUnit.SECONDS);

      await(lb, "the estimated RTTs", Map.of("o0@agent-one", 200L, "o1@n1", 2_200L, "o2@n2", 5_000L));
      assertThat(lb.status()).allSatisfy(s -> assertThat(s.target().roundTripTime()).isPresent());
      assertThat(fake.requests("/v1/agent/self")).hasSize(1);
      assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
    }
  }

  @Test
  void malformedOrMissingCoordinate_ranksUnknown_andIsCounted_andAnUpdateIsRepublished() throws Exception {
    threeNodes();
    fake.register("orders", Instance.of("o3", "127.0.0.1", 18083).onNode("n3", "127.0.0.1")); // no coordinate
    try (ConsulTargetSource source = source(); LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build()) {
      await(lb, "the first estimates", Map.of("o0@agent-one", 200L, "o1@n1", 2_200L, "o2@n2", 5_000L, "o3@n3", -1L));
      assertThat(skipped("coordinate_missing")).isEqualTo(1.0);

      fake.setCoordinateRaw("n2", "", "{\"Adjustment\":0,\"Error\":0.2,\"Height\":0,\"Vec\":[0,\"NaN\",0,0,0,0,0,0]}");
      await(lb, "n2 unknown", Map.of("o0@agent-one", 200L, "o1@n1", 2_200L, "o2@n2", -1L, "o3@n3", -1L));
      assertThat(skipped("coordinate_malformed")).isEqualTo(1.0);

      fake.setCoordinate("n1", new double[] {0.001, 0.004, 0, 0, 0, 0, 0, 0}, 0.2, 0, 0.0001);
      await(lb, "n1 moved", Map.of("o0@agent-one", 200L, "o1@n1", 4_200L, "o2@n2", -1L, "o3@n3", -1L));

      fake.setCoordinate("n2", N2, 0.2, -0.0003, 0.0002);
      fake.setCoordinate("n3", N1, 0.2, 0, 0.0001);
      await(lb, "n2 and n3 known", Map.of("o0@agent-one", 200L, "o1@n1", 4_200L, "o2@n2", 5_000L, "o3@n3", 2_200L));
      assertThat(skipped("coordinate_missing")).isEqualTo(1.0);
      assertThat(skipped("coordinate_malformed")).isEqualTo(1.0);
      assertThat(lb.status()).hasSize(4);
    }
  }

  @Test
  void closenessOff_sendsNoCoordinateRequest() throws Exception {
    threeNodes();
    try (ConsulTargetSource source = fast(fake, "orders").closeness(false).build()) {
      List<?> targets = source.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(targets).hasSize(3);
      assertThat(source.targets()).allSatisfy(t -> assertThat(t.roundTripTime()).isEmpty());
    }
    assertThat(fake.requests("/v1/agent/")).isEmpty();
    assertThat(fake.requests("/v1/coordinate/")).isEmpty();
  }
}
