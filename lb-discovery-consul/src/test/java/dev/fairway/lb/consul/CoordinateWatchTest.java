package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.ScriptedHttp.headers;
import static dev.fairway.lb.consul.WatchLoopTest.entry;
import static dev.fairway.lb.consul.WatchLoopTest.list;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The coordinate watch on fake time: every request it sends and every wait it asks for, in order, and
 * the round-trip times the sources publish from it. The backoff's draw is fixed at 0.5 (500 ms, 1 s,
 * 2 s, ...); the minimum interval between coordinate reads is the default 60 s.
 */
class CoordinateWatchTest {
  static final String HEALTH = "/v1/health/service/orders";
  static final String SELF = "/v1/agent/self";
  static final String NODES = "/v1/coordinate/nodes";

  private final ScriptedHttp http = new ScriptedHttp();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<String> warnings = new CopyOnWriteArrayList<>();
  private final List<Logger> loggers = List.of(Logger.getLogger(ConsulTargetSource.class.getName()),
      Logger.getLogger(ConsulDiscovery.class.getName()));
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
        warnings.add(new java.util.logging.SimpleFormatter().formatMessage(r));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private final ConsulDiscovery discovery = TestSupport.fakeTime(http, scheduler);

  CoordinateWatchTest() {
    loggers.forEach(l -> l.addHandler(capture));
  }

  @AfterEach
  void detach() {
    loggers.forEach(l -> l.removeHandler(capture));
  }

  /** {@code /v1/agent/self} in the shape a client agent answers, with the agent's own coordinate. */
  static String self(String node, String dc, String coord) {
    return "{\"Config\":{\"Datacenter\":\"" + dc + "\",\"PrimaryDatacenter\":\"" + dc + "\",\"NodeName\":\"" + node
        + "\",\"NodeID\":\"2ab1c3d4-0000-4000-8000-000000000001\",\"Revision\":\"f1a2b3c4\",\"Server\":false,"
        + "\"Version\":\"1.21.4\",\"BuildDate\":\"2025-08-12T10:00:00Z\"},"
        + "\"DebugConfig\":{\"SegmentName\":\"\",\"NodeName\":\"" + node + "\"},"
        + "\"Coord\":" + coord + ","
        + "\"Member\":{\"Name\":\"" + node + "\",\"Addr\":\"10.0.0.100\",\"Port\":8301,"
        + "\"Tags\":{\"dc\":\"" + dc + "\",\"role\":\"node\",\"segment\":\"\",\"vsn\":\"2\"},\"Status\":1},"
        + "\"Stats\":{},\"Meta\":{\"consul-network-segment\":\"\"}}";
  }

  /** A {@code Coord} object; values in seconds. */
  static String coord(double adjustment, double height, double... vec) {
    return "{\"Adjustment\":" + adjustment + ",\"Error\":0.2,\"Height\":" + height + ",\"Vec\":"
        + Arrays.stream(vec).mapToObj(Double::toString).collect(Collectors.joining(",", "[", "]")) + "}";
  }

  static String node(String name, String coordJson) {
    return "{\"Node\":\"" + name + "\",\"Segment\":\"\",\"Coord\":" + coordJson + "}";
  }

  // Eight dimensions, as Consul's. From the agent: n1 2.2 ms, n2 5.0 ms (its adjustment is negative),
  // the agent's own node 0.2 ms (twice its height).
  static final String AGENT = coord(0, 0.0001, 0.001, 0, 0, 0, 0, 0, 0, 0);
  static final String N1 = coord(0, 0.0001, 0.001, 0.002, 0, 0, 0, 0, 0, 0);
  static final String N2 = coord(-0.0003, 0.0002, 0.004, 0.004, 0, 0, 0, 0, 0, 0);
  static final String N2_MOVED = coord(-0.0003, 0.0002, 0.007, 0.008, 0, 0, 0, 0, 0, 0); // 0.005 -> 0.01 s away
  static final String SELF_REPLY = self("agent-one", "dc1", AGENT);

  static String nodes(String... entries) {
    return "[" + String.join(",", entries) + "]";
  }

  static final String O1 = entry("o1", "n1", "10.0.0.1", 80, "passing");
  static final String O2 = entry("o2", "n2", "10.0.0.2", 80, "passing");
  static final String O0 = entry("o0", "agent-one", "10.0.0.100", 80, "passing");

  private static List<String> rtts(ConsulTargetSource s) {
    List<String> out = new ArrayList<>();
    for (Target t : s.targets()) {
      out.add(t.id() + "=" + (t.roundTripNanos() < 0 ? "unknown" : t.roundTripNanos() / 1000 + "us"));
    }
    return out;
  }

  private double count(String meter, String reason) {
    Counter c = registry.find(meter).tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private double updates() {
    return registry.get("fairway.discovery.updates").counter().count();
  }

  /** A source whose health list (o0, o1, o2) and first coordinate reading (index 20) are in. */
  private ConsulTargetSource started() {
    ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(HEALTH, 10, list(O0, O1, O2));
    http.ok(NODES, 20, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2)));
    return s;
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void poll_readsSelfThenNodes_thenBlocksOnTheIndex_atMostOncePerMinute() {
    ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
    assertThat(http.paths()).containsExactly(HEALTH, SELF);
    assertThat(http.open(SELF).timeout()).isEqualTo(Duration.ofSeconds(10));

    http.reply(SELF, 200, headers(), SELF_REPLY);
    assertThat(http.paths()).containsExactly(HEALTH, SELF, NODES + "?stale");

    http.ok(HEALTH, 10, list(O0, O1, O2));
    assertThat(rtts(s)).as("the first list does not wait for the coordinates")
        .containsExactly("o0@agent-one=unknown", "o1@n1=unknown", "o2@n2=unknown");
    assertThat(s.whenReady()).isCompleted();

    http.ok(NODES, 20, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2)));
    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=5000us");
    assertThat(updates()).isEqualTo(2.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L);

    scheduler.runNext();
    assertThat(http.paths(NODES)).containsExactly(NODES + "?stale", NODES + "?stale&index=20&wait=5m");
    assertThat(http.open(NODES).timeout()).isEqualTo(Duration.ofMillis(300_000 + 18_750 + 30_000));

    http.ok(NODES, 21, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2_MOVED)));
    assertThat(rtts(s)).as("a moved coordinate is a changed target")
        .containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=10000us");
    assertThat(updates()).isEqualTo(3.0);

    scheduler.runNext();
    http.ok(NODES, 22, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2_MOVED)));
    assertThat(updates()).as("the same coordinates under a new index change nothing").isEqualTo(3.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 60_000L, 60_000L);
    assertThat(http.paths(SELF)).as("agent/self is read once while all goes well").hasSize(1);
    assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
  }

  @Test
  void driftBelowATenthOfAMillisecond_isNotRepublished() {
    ConsulTargetSource s = started();
    scheduler.runNext();
    // n1 moves by 30 microseconds: 2.23 ms rounds to 2.2 ms as before.
    http.ok(NODES, 21, nodes(node("agent-one", AGENT), node("n1", coord(0, 0.0001, 0.001, 0.00203, 0, 0, 0, 0, 0, 0)),
        node("n2", N2)));

    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=5000us");
    assertThat(updates()).isEqualTo(2.0);
  }

  @Test
  void failure_keepsTheLastReading_backsOff_thenRereadsSelfAndReadsAfresh() {
    ConsulTargetSource s = started();
    scheduler.runNext();

    http.reply(NODES, 500, headers(), "No cluster leader");
    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=5000us");
    assertThat(count("fairway.discovery.errors", "coordinates_http_500")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 500L);

    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).isEqualTo(SELF);
    http.fail(SELF, new ConnectException("Connection refused"));
    assertThat(count("fairway.discovery.errors", "coordinates_connect")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 500L, 1_000L);

    scheduler.runNext();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    assertThat(http.last().pathAndQuery()).as("a fresh read, not blocking on the old index").isEqualTo(NODES + "?stale");
    http.ok(NODES, 30, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2_MOVED)));
    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=10000us");

    scheduler.runNext();
    http.reply(NODES, 500, headers(), "No cluster leader");
    assertThat(scheduler.waitsMillis()).as("a success resets the backoff")
        .containsExactly(60_000L, 500L, 1_000L, 60_000L, 500L);
    assertThat(http.paths(SELF)).hasSize(3);
  }

  @Test
  void badIndex_orBadBody_isAFailure_andABackwardsIndexReadsAfresh() {
    ConsulTargetSource s = started();
    scheduler.runNext();
    http.reply(NODES, 200, headers(), nodes(node("n1", N1))); // no X-Consul-Index
    assertThat(count("fairway.discovery.errors", "coordinates_missing_index")).isEqualTo(1.0);
    scheduler.runNext();
    http.reply(SELF, 200, headers(), "<html>502 Bad Gateway</html>");
    assertThat(count("fairway.discovery.errors", "coordinates_malformed_self")).isEqualTo(1.0);
    scheduler.runNext();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(NODES, 30, "{\"not\":\"an array\"}");
    assertThat(count("fairway.discovery.errors", "coordinates_malformed")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 500L, 1_000L, 2_000L);
    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=5000us");

    scheduler.runNext();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(NODES, 30, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2)));
    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).isEqualTo(NODES + "?stale&index=30&wait=5m");
    http.ok(NODES, 7, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2))); // a snapshot restore
    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).as("never block on an index that went backwards").isEqualTo(NODES + "?stale");
  }

  @Test
  void nodeWithAMalformedMissingOrOtherDimensionalCoordinate_ranksUnknown_countedOnceLoggedOnce() {
    ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(HEALTH, 10, list(O0, O1, O2, entry("o3", "n3", "10.0.0.3", 80, "passing"),
        entry("o4", "n4", "10.0.0.4", 80, "passing")));
    String n2Malformed = "{\"Adjustment\":0,\"Error\":0.2,\"Height\":\"high\",\"Vec\":[0,0,0,0,0,0,0,0]}";
    String n4ThreeDims = coord(0, 0.0001, 0.001, 0.002, 0);
    http.ok(NODES, 20, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", n2Malformed),
        node("n4", n4ThreeDims))); // n3 has no entry at all

    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=unknown", "o3@n3=unknown",
        "o4@n4=unknown");
    assertThat(count("fairway.discovery.skipped", "coordinate_malformed")).isEqualTo(1.0);
    assertThat(count("fairway.discovery.skipped", "coordinate_missing")).isEqualTo(1.0);
    assertThat(count("fairway.discovery.skipped", "coordinate_dimensions")).isEqualTo(1.0);
    assertThat(warnings).anyMatch(w -> w.equals("skipped the network coordinate of Consul node n2"
        + " (coordinate_malformed): Coord.Height is \"high\""));
    assertThat(warnings).anyMatch(w -> w.equals("skipped the network coordinate of Consul node n4"
        + " (coordinate_dimensions): Coord.Vec has 3 dimensions, the agent's has 8"));
    assertThat(warnings).anyMatch(w -> w.equals("orders: no network coordinate for node n3 (coordinate_missing);"
        + " its instances rank as of unknown distance"));
    int logged = warnings.size();

    scheduler.runNext();
    http.ok(NODES, 21, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", n2Malformed),
        node("n4", n4ThreeDims)));
    assertThat(count("fairway.discovery.skipped", "coordinate_malformed")).as("counted when it turns bad").isEqualTo(1.0);
    assertThat(warnings).hasSize(logged);

    scheduler.runNext();
    http.ok(NODES, 22, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2), node("n3", N1),
        node("n4", N1)));
    assertThat(rtts(s)).containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=5000us", "o3@n3=2200us",
        "o4@n4=2200us");
  }

  @Test
  void agentWithoutACatalogCoordinate_usesTheOneAgentSelfReports() {
    ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(HEALTH, 10, list(O1, O2));
    http.ok(NODES, 20, nodes(node("n1", N1), node("n2", N2))); // the agent joined moments ago

    assertThat(rtts(s)).containsExactly("o1@n1=2200us", "o2@n2=5000us");
  }

  @Test
  void agentWithCoordinatesDisabled_leavesEveryTargetUnknown_andTheListServes() {
    ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
    http.reply(SELF, 200, headers(), self("agent-one", "dc1", "null"));
    http.ok(HEALTH, 10, list(O1, O2));
    http.reply(NODES, 401, headers(), "Coordinate support disabled");

    assertThat(rtts(s)).containsExactly("o1@n1=unknown", "o2@n2=unknown");
    assertThat(count("fairway.discovery.errors", "coordinates_http_401")).isEqualTo(1.0);
    assertThat(warnings).anyMatch(w -> w.contains("Consul coordinates unavailable (http_401: Coordinate support disabled)"));
  }

  @Test
  void anotherDatacenter_orAPeer_getsNoCloseness() {
    ConsulTargetSource other = discovery.source("orders").datacenter("dc2").meterRegistry(registry).build();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(HEALTH, 10, list(O1, O2));
    http.ok(NODES, 20, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2)));
    assertThat(rtts(other)).as("dc1's LAN coordinates say nothing about dc2").containsExactly("o1@n1=unknown",
        "o2@n2=unknown");

    int before = http.count();
    discovery.source("billing").peer("east").build();
    assertThat(http.paths().subList(before, http.count())).as("a peer's source does not join the coordinate watch")
        .containsExactly("/v1/health/service/billing?peer=east");
  }

  @Test
  void oneWatchPerDiscovery_sharedBySources_cancelledWhenTheLastOneCloses() {
    ConsulTargetSource a = started();
    ConsulTargetSource b = discovery.source("billing").build();
    http.ok("/v1/health/service/billing", 11, list(O1));
    assertThat(b.targets()).extracting(Target::roundTripNanos).as("the current reading, at once")
        .containsExactly(2_200_000L);
    assertThat(http.paths(SELF)).hasSize(1);
    assertThat(http.paths(NODES)).hasSize(1);

    scheduler.runNext(); // the coordinate read blocking on index 20
    ScriptedHttp.Call blocking = http.open(NODES);
    a.close();
    assertThat(blocking.reply()).as("b still listens").isNotCancelled();
    assertThat(discovery.coordinateWatch()).isNotNull();

    b.close();
    assertThat(blocking.reply()).isCancelled();
    assertThat(discovery.coordinateWatch()).isNull();
    assertThat(scheduler.pending()).as("no coordinate step waits any more").isZero();

    ConsulTargetSource c = discovery.source("orders").build();
    assertThat(http.paths(SELF)).as("a new listener starts a new watch").hasSize(2);
    c.close();
  }

  @Test
  void closingTheDiscovery_cancelsTheCoordinateWait() {
    started();
    assertThat(scheduler.pending()).isEqualTo(1); // the 60 s wait before the next coordinate read
    discovery.close();
    assertThat(scheduler.pending()).isZero();
    assertThat(discovery.coordinateWatch()).isNull();
  }

  @Test
  void aThrowingTransportOrListener_isCountedAndBackedOff_andTheWatchGoesOn() {
    ConsulTargetSource s = started();
    http.throwOnNextGet(new IllegalStateException("a transport that throws instead of failing the future"));
    scheduler.runNext(); // the next coordinate read: http.get throws inside the step

    assertThat(count("fairway.discovery.errors", "coordinates_unexpected")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 500L);
    assertThat(warnings).anyMatch(w -> w.contains("unexpected failure in the Consul coordinate watch"));

    ConsulDiscovery d = discovery;
    AutoCloseable bad = d.watchCoordinates(new CoordinateWatch.Listener() {
      @Override
      public void coordinates(NetworkCoordinates reading) {
        throw new IllegalStateException("a listener that fails");
      }

      @Override
      public void coordinateError(String reason) {}
    });
    scheduler.runNext();
    http.reply(SELF, 200, headers(), SELF_REPLY);
    http.ok(NODES, 30, nodes(node("agent-one", AGENT), node("n1", N1), node("n2", N2_MOVED)));
    assertThat(rtts(s)).as("the other listeners still hear the reading")
        .containsExactly("o0@agent-one=200us", "o1@n1=2200us", "o2@n2=10000us");
    assertThat(warnings).anyMatch(w -> w.contains("a coordinate listener failed"));
    assertThat(scheduler.waitsMillis()).containsExactly(60_000L, 500L, 60_000L);
    try {
      bad.close();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
