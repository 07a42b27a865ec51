package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static dev.fairway.lb.consul.TestSupport.awaitValue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.PeerPosition;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * "This client is instance X of service Y", read live from the fake agent on real sockets: X's index
 * among the sorted ids of Y's passing instances, and their count.
 */
class ConsulPeerCoordinateTest {
  private static final Duration MAX = Duration.ofSeconds(10);

  private final FakeConsul fake = FakeConsul.start();
  private final ConsulDiscovery discovery =
      ConsulDiscovery.builder().environment(Map.of()).consulUrl(fake.url()).build();
  private final List<String> lines = new CopyOnWriteArrayList<>();
  private final Logger jul = Logger.getLogger(ConsulPeerCoordinate.class.getName());
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      if (r.getLevel().intValue() >= java.util.logging.Level.INFO.intValue()) {
        lines.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  ConsulPeerCoordinateTest() {
    jul.addHandler(capture);
  }

  @AfterEach
  void stop() {
    jul.removeHandler(capture);
    discovery.close();
    fake.close();
  }

  private static Optional<PeerPosition> at(int index, int count) {
    return Optional.of(new PeerPosition(index, count));
  }

  private static Instance checkout(String id) {
    return Instance.of(id, "127.0.0.1", 9000);
  }

  private Optional<PeerPosition> awaitPosition(ConsulPeerCoordinate c, Optional<PeerPosition> expected) {
    return awaitValue(MAX, c + " at " + expected, c::current, expected::equals);
  }

  @Test
  void registeredClient_isItsIndexAmongTheSortedPassingIds() {
    fake.registerAll("checkout", List.of(checkout("c3"), checkout("c1"), checkout("c2")));
    try (ConsulPeerCoordinate byServiceId = discovery.peerCoordinate("checkout", "c2");
        ConsulPeerCoordinate byFullId = discovery.peerCoordinate("checkout", "c3@node-c3")) {
      awaitPosition(byServiceId, at(1, 3));
      awaitPosition(byFullId, at(2, 3));
      assertThat(discovery.sources()).as("two coordinates of one service share one watch").isEqualTo(1);
      assertThat(fake.requests("/v1/health/service/checkout")).as("a passing-only query")
          .allMatch(r -> r.target().contains("passing"));
    }
    assertThat(discovery.sources()).as("the last close stops the shared watch").isZero();
    assertThat(lines).as("the expected case logs nothing").isEmpty();
  }

  @Test
  void indexMoves_whenAPeerJoinsOrLeaves_orStopsPassing() {
    fake.registerAll("checkout", List.of(checkout("c1"), checkout("c2"), checkout("c3")));
    try (ConsulPeerCoordinate me = discovery.peerCoordinate("checkout", "c2")) {
      awaitPosition(me, at(1, 3));
      List<Optional<PeerPosition>> seen = new CopyOnWriteArrayList<>();
      me.subscribe(seen::add);

      fake.register("checkout", checkout("c0"));
      awaitPosition(me, at(2, 4));
      fake.deregister("checkout", "c1");
      awaitPosition(me, at(1, 3));
      fake.register("checkout", checkout("c9")); // after c2: index stays, count grows
      awaitPosition(me, at(1, 4));
      fake.setStatus("checkout", "c0", "critical");
      awaitPosition(me, at(0, 3));
      fake.setStatus("checkout", "c0", "warning"); // not passing either: no change
      fake.register("checkout", checkout("c1"));
      awaitPosition(me, at(1, 4));

      assertThat(seen).containsExactly(at(1, 3), at(2, 4), at(1, 3), at(1, 4), at(0, 3), at(1, 4));
    }
    assertThat(lines).isEmpty();
  }

  @Test
  void unregisteredClient_hasNoPosition_andOneLineSaysSoPerTransition() {
    fake.registerAll("checkout", List.of(checkout("c1"), checkout("c3")));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ConsulPeerCoordinate me = discovery.peerCoordinate("checkout", "c2", registry)) {
      await(MAX, "the warning", () -> lines.size() == 1);
      assertThat(me.current()).isEmpty();
      assertThat(lines.get(0)).isEqualTo("WARNING checkout: instance c2 is not among the 2 passing instances in"
          + " Consul (not registered, failing a check or in maintenance); balancing over every target, without a"
          + " subset");
      assertThat(gauge(registry, "fairway.discovery.peer.index")).isEqualTo(-1);
      assertThat(gauge(registry, "fairway.discovery.peer.count")).isEqualTo(2);

      fake.register("checkout", checkout("c4")); // still absent: no second line
      await(MAX, "the new peer counted", () -> gauge(registry, "fairway.discovery.peer.count") == 3);
      assertThat(me.current()).isEmpty();

      fake.register("checkout", checkout("c2"));
      awaitPosition(me, at(1, 4));
      assertThat(gauge(registry, "fairway.discovery.peer.index")).isEqualTo(1);
      fake.maintenance("checkout", "c2", true);
      awaitPosition(me, Optional.empty());
      await(MAX, "the second warning", () -> lines.size() == 3);
      assertThat(lines.get(1)).isEqualTo("INFO checkout: instance c2 is now 1 of 4 passing instances; subsetting on");
      assertThat(lines.get(2)).startsWith("WARNING checkout: instance c2 is not among the 3 passing instances");
      assertThat(gauge(registry, "fairway.discovery.peer.index")).isEqualTo(-1);
    }
    assertThat(registry.find("fairway.discovery.peer.index").gauge()).as("close unregisters the gauges").isNull();
    assertThat(lines).hasSize(3);
  }

  @Test
  void unregisteredClient_balancerRunsWithoutASubset_untilItRegisters() throws Exception {
    fake.registerAll("checkout", List.of(checkout("c1"), checkout("c3"), checkout("c4"), checkout("c5")));
    Target[] orders = new Target[10];
    for (int i = 0; i < orders.length; i++) {
      orders[i] = Target.of("10.0.1." + (i + 1), 8080);
    }
    try (ConsulPeerCoordinate me = discovery.peerCoordinate("checkout", "c2");
        LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).strategy(Strategy.roundRobin())
            .subset(Subset.of(3, me).withFloor(1)).build()) {
      await(MAX, "the warning", () -> lines.size() == 1);
      assertThat(me.current()).isEmpty();
      assertThat(inWindow(lb)).as("no position: every target").hasSize(10);
      assertThat(picked(lb, 40)).hasSize(10);

      fake.register("checkout", checkout("c2"));
      awaitPosition(me, at(1, 5));
      Set<String> window = awaitValue(MAX, "a window", () -> inWindow(lb), w -> w.size() < 10);
      assertThat(window.size()).as("3 targets, plus at most two partly covered at the edges").isBetween(3, 5);
      assertThat(picked(lb, 40)).isEqualTo(window);

      fake.deregister("checkout", "c2");
      awaitPosition(me, Optional.empty());
      awaitValue(MAX, "every target again", () -> inWindow(lb), w -> w.size() == 10);
      assertThat(picked(lb, 40)).hasSize(10);
    }
  }

  private static Set<String> inWindow(LoadBalancer lb) {
    return lb.status().stream().filter(s -> s.subsetShare() > 0).map(s -> s.target().id())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> picked(LoadBalancer lb, int n) throws NoTargetAvailableException {
    Set<String> ids = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      ids.add(p.target().id());
      p.success();
    }
    return ids;
  }

  @Test
  void emptyService_afterConsulsFirstReply_isAnnounced() {
    try (ConsulPeerCoordinate me = discovery.peerCoordinate("nobody", "n1")) {
      await(MAX, "the warning", () -> lines.size() == 1);
      assertThat(lines.get(0)).startsWith("WARNING nobody: instance n1 is not among the 0 passing instances");
      assertThat(me.current()).isEmpty();
    }
  }

  @Test
  void serviceIdOnTwoNodes_isAmbiguous_theFullIdIsNot() {
    fake.register("checkout", checkout("c1").onNode("n-a", "10.0.0.1"));
    fake.register("checkout", checkout("c1").onNode("n-b", "10.0.0.2"));
    try (ConsulPeerCoordinate bare = discovery.peerCoordinate("checkout", "c1");
        ConsulPeerCoordinate full = discovery.peerCoordinate("checkout", "c1@n-b")) {
      awaitPosition(full, at(1, 2));
      await(MAX, "the warning", () -> lines.size() == 1);
      assertThat(bare.current()).isEmpty();
      assertThat(lines.get(0)).isEqualTo("WARNING checkout: instance c1 names 2 passing instances [c1@n-a, c1@n-b];"
          + " give the full id <Service.ID>@<Node>; balancing over every target, without a subset");
    }
  }

  @Test
  void close_stopsTheCalls_andKeepsTheLastPosition() {
    fake.registerAll("checkout", List.of(checkout("c1"), checkout("c2")));
    ConsulPeerCoordinate me = discovery.peerCoordinate("checkout", "c2");
    awaitPosition(me, at(1, 2));
    List<Optional<PeerPosition>> seen = new CopyOnWriteArrayList<>();
    me.subscribe(seen::add);
    me.close();
    me.close();
    assertThat(discovery.sources()).isZero();

    // A later coordinate of the same service starts a new watch and sees the change; the closed one does not.
    fake.register("checkout", checkout("c0"));
    try (ConsulPeerCoordinate again = discovery.peerCoordinate("checkout", "c2")) {
      awaitPosition(again, at(2, 3));
    }
    assertThat(me.current()).isEqualTo(at(1, 2));
    assertThat(seen).containsExactly(at(1, 2));
  }

  @Test
  void closingTheDiscovery_closesItsCoordinates() {
    fake.register("checkout", checkout("c1"));
    ConsulPeerCoordinate me = discovery.peerCoordinate("checkout", "c1");
    awaitPosition(me, at(0, 1));
    List<Optional<PeerPosition>> seen = new CopyOnWriteArrayList<>();
    me.subscribe(seen::add);
    discovery.close();
    assertThat(discovery.sources()).isZero();
    fake.register("checkout", checkout("c0"));
    assertThat(seen).containsExactly(at(0, 1));
    assertThatThrownBy(() -> discovery.peerCoordinate("checkout", "c1")).isInstanceOf(IllegalStateException.class)
        .hasMessage("this ConsulDiscovery was closed");
  }

  @Test
  void badNames_failNamingTheArgument() {
    assertThatThrownBy(() -> discovery.peerCoordinate("checkout", " ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("instanceId: ");
    assertThatThrownBy(() -> discovery.peerCoordinate("checkout", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("instanceId: null");
    assertThatThrownBy(() -> discovery.peerCoordinate("a/b", "c1")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("serviceName: ");
    assertThat(discovery.sources()).isZero();
  }

  @Test
  void matches_exactIdFirst_thenTheServiceIdPart_whichMayHoldAnAt() {
    List<String> ids = List.of("a@b@n1", "a@n1", "a@n2", "ab@n1");
    assertThat(ConsulPeerCoordinate.matches(ids, "a@n2")).containsExactly(2);
    assertThat(ConsulPeerCoordinate.matches(ids, "a")).containsExactly(1, 2);
    assertThat(ConsulPeerCoordinate.matches(ids, "a@b")).containsExactly(0);
    assertThat(ConsulPeerCoordinate.matches(ids, "ab")).containsExactly(3);
    assertThat(ConsulPeerCoordinate.matches(ids, "b")).isEmpty();
  }

  private static double gauge(SimpleMeterRegistry registry, String name) {
    return registry.get(name).tags("service", "checkout", "instance", "c2").gauge().value();
  }
}
