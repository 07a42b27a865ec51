package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lab's targets are {@code backend-1} .. {@code backend-4} whatever ports the backends got, so
 * {@code consistent-hash} (a ring over target ids) places the lab's users on the same backends in
 * every run and through every client, and the three Fairway clients still route each call by the
 * target's address; the Spring clients' instances carry the same names as instance ids. Balancers
 * and clients are built by {@link ScenarioRun} itself, over real loopback backends; no timed lab
 * runs here.
 */
class LabTargetIdsTest {
  private static final String STRATEGY = "consistent-hash";
  private static final LabOptions OPTIONS =
      LabOptions.parse("--client", "okhttp,jdk,hc5", "--scenario", "light", "--strategies", STRATEGY);
  private static final int USERS = OPTIONS.users(Scenario.LIGHT);

  private final List<AutoCloseable> open = new ArrayList<>();
  private final OkHttpClient probeClient =
      new OkHttpClient.Builder().connectionPool(new ConnectionPool(16, 1, TimeUnit.MINUTES)).build();

  @AfterEach
  void closeEverything() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    ScenarioRun.shutdown(probeClient);
  }

  @Test
  void consistentHash_placesEveryUserOnTheSameBackend_whateverPortsTheBackendsGot() throws Exception {
    ScenarioRun run = new ScenarioRun(OPTIONS, Scenario.LIGHT, STRATEGY);
    Backend[] first = backends();
    Backend[] second = backends(); // the first ones still listen: none of these ports is one of theirs
    assertThat(ports(second)).doesNotContainAnyElementsOf(ports(first));

    int[] placed = placement(run, first);

    assertThat(placement(run, second)).containsExactly(placed);
  }

  @Test
  void balancerTargets_areNamedInBackendOrder_andAddressedByTheirPorts() throws Exception {
    Backend[] backends = backends();
    try (LoadBalancer balancer =
        new ScenarioRun(OPTIONS, Scenario.LIGHT, STRATEGY).newBalancer(backends, new SimpleMeterRegistry(), probeClient)) {
      List<String> seen = new ArrayList<>();
      for (TargetStatus s : balancer.status()) {
        Target t = s.target();
        seen.add(t.id() + " " + t.authority() + " admin " + t.metadata().get(ScenarioRun.ADMIN_PORT));
      }
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < backends.length; i++) {
        expected.add("backend-" + (i + 1) + " 127.0.0.1:" + backends[i].port() + " admin " + backends[i].adminPort());
      }
      assertThat(seen).containsExactlyInAnyOrderElementsOf(expected);
    }
  }

  /** {@code --client spring}: the starter's targets take their ids from the instance ids (its {@code InstanceTargets}). */
  @Test
  void springInstances_haveTheBackendsNamesAsInstanceIds() throws Exception {
    Backend[] backends = backends();
    Map<String, Object> properties = SpringLabClient.properties(0, STRATEGY, backends, LabOptions.parse("--client", "spring"));
    List<String> seen = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < backends.length; i++) {
      String prefix = "spring.cloud.discovery.client.simple.instances." + ScenarioRun.SERVICE + "[" + i + "].";
      seen.add(properties.get(prefix + "instance-id") + " " + properties.get(prefix + "uri"));
      expected.add("backend-" + (i + 1) + " http://127.0.0.1:" + backends[i].port());
    }
    assertThat(seen).containsExactlyElementsOf(expected);
  }

  /**
   * Each Fairway client's calls reach the backend the ring holds for the user's key: the key is read
   * from the user's header, and the call goes to the picked target's host and port (its id,
   * {@code backend-N}, is no address). The backend says who it is in its reply.
   */
  @Test
  void everyFairwayClient_sendsEachUserToTheBackendItsKeyIsPlacedOn() throws Exception {
    for (LabClient.Kind kind : List.of(LabClient.Kind.OKHTTP, LabClient.Kind.JDK, LabClient.Kind.HC5)) {
      ScenarioRun run = new ScenarioRun(OPTIONS.forClient(kind), Scenario.LIGHT, STRATEGY);
      Backend[] backends = backends();
      int[] placed = placement(run, backends);
      LabClient client = run.newFairwayLabClient(backends, USERS, probeClient);
      open.add(client);
      List<String> reached = new ArrayList<>();
      List<String> expected = new ArrayList<>();
      for (int u = 0; u < USERS; u++) {
        LabClient.Reply reply = client.caller(ScenarioRun.userName(u)).get();
        reached.add(ScenarioRun.userName(u) + " " + reply.status() + " backend-" + reply.backend());
        expected.add(ScenarioRun.userName(u) + " 200 backend-" + (placed[u] + 1));
      }
      assertThat(reached).as("through %s", kind.id()).containsExactlyElementsOf(expected);
      for (Backend b : backends) {
        assertThat(client.inFlight(b.port())).as("in flight to %s through %s", b.name(), kind.id()).isZero();
      }
    }
  }

  /** For each of the lab's users, the index of the backend its key is placed on by a fresh balancer of {@code run}. */
  private int[] placement(ScenarioRun run, Backend[] backends) throws Exception {
    int[] placed = new int[USERS];
    try (LoadBalancer balancer = run.newBalancer(backends, new SimpleMeterRegistry(), probeClient)) {
      for (int u = 0; u < USERS; u++) {
        try (Pick pick = balancer.pick(ScenarioRun.userName(u))) {
          placed[u] = indexOf(backends, pick.target().port());
        }
      }
    }
    return placed;
  }

  private Backend[] backends() throws Exception {
    Backend[] backends = new Backend[4];
    for (int i = 0; i < backends.length; i++) {
      backends[i] = new Backend(i + 1, TimeUnit.MILLISECONDS.toNanos(1), 4).start();
      open.add(backends[i]);
    }
    return backends;
  }

  private static List<Integer> ports(Backend[] backends) {
    List<Integer> ports = new ArrayList<>();
    for (Backend b : backends) {
      ports.add(b.port());
    }
    return ports;
  }

  private static int indexOf(Backend[] backends, int port) {
    for (int i = 0; i < backends.length; i++) {
      if (backends[i].port() == port) {
        return i;
      }
    }
    throw new AssertionError("no backend listens on port " + port);
  }
}
