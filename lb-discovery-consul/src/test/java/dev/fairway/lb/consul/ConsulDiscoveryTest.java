package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** One agent connection for many services: what it costs, measured on the fake agent's sockets. */
class ConsulDiscoveryTest {
  private static final int SERVICES = 30;
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  private static Set<Thread> threads() {
    return new HashSet<>(Thread.getAllStackTraces().keySet());
  }

  private long blockedQueries() {
    return fake.requests("/v1/health/").stream().filter(r -> r.target().contains("index=") && r.status() == 0).count();
  }

  @Test
  void thirtyServices_oneDiscovery_costFourThreadsAndThirtyConnections() throws Exception {
    for (int i = 0; i < SERVICES; i++) {
      fake.register("svc-" + i, Instance.of("i" + i, "10.0.0." + (i + 1), 8080));
    }
    Set<Thread> before = threads();
    int connectionsBefore = fake.connectionsAccepted();
    List<String> newThreads;
    String loopThread;
    try (ConsulDiscovery discovery = ConsulDiscovery.builder().environment(Map.of()).consulUrl(fake.url()).build()) {
      List<ConsulTargetSource> sources = new ArrayList<>();
      for (int i = 0; i < SERVICES; i++) {
        sources.add(discovery.source("svc-" + i).build());
      }
      for (ConsulTargetSource s : sources) {
        assertThat(s.whenReady().get(10, TimeUnit.SECONDS)).hasSize(1);
      }
      await(Duration.ofSeconds(10), "30 blocking queries parked", () -> blockedQueries() == SERVICES);

      Set<Thread> during = threads();
      during.removeAll(before);
      // The fake agent serves each connection on a thread of its own: those are the agent's, not ours.
      newThreads = during.stream().filter(Thread::isAlive).map(Thread::getName)
          .filter(n -> !n.startsWith("MockWebServer")).sorted().collect(Collectors.toList());
      int connections = fake.connectionsAccepted() - connectionsBefore;
      System.out.printf("one ConsulDiscovery, %d services: %d new threads %s, %d TCP connections to the agent%n",
          SERVICES, newThreads.size(), newThreads, connections);

      assertThat(newThreads).as("threads, whatever the number of services").hasSize(4);
      assertThat(newThreads.get(0)).matches("HttpClient-\\d+-SelectorManager");
      assertThat(newThreads.get(1)).matches("fairway-consul-discovery-\\d+");
      loopThread = newThreads.get(1);
      assertThat(newThreads.subList(2, 4)).allMatch(n -> n.matches("fairway-consul-discovery-\\d+-http-[01]"));
      // The shared coordinate watch adds at most one: its reads run one at a time, and an idle kept-alive
      // connection may serve either it or a health query.
      assertThat(connections).as("one connection per blocking query plus the coordinate watch's, far below"
          + " http_max_conns_per_client 200").isBetween(SERVICES, SERVICES + 1);
      assertThat(fake.requests("/v1/agent/self")).as("one coordinate watch for 30 sources").hasSize(1);
      assertThat(discovery.sources()).isEqualTo(SERVICES);

      fake.register("svc-7", Instance.of("i7b", "10.0.1.7", 8080));
      await(Duration.ofSeconds(3), "a change of one service", () -> sources.get(7).targets().size() == 2);
      // (svc-7's next query now waits for the token bucket: its burst of 2 went on the first read
      // and the first blocking query.)
      assertThat(fake.connectionsAccepted() - connectionsBefore).as("no connection added").isEqualTo(connections);
    }
    assertThat(TestSupport.consulThreads()).as("close stops the discovery's threads")
        .noneMatch(t -> t.getName().startsWith(loopThread));
  }

  @Test
  void close_closesEverySourceMadeFromIt_andRefusesNewOnes() throws Exception {
    fake.register("a", Instance.of("a1", "10.0.0.1", 80));
    ConsulDiscovery discovery = ConsulDiscovery.builder().environment(Map.of()).consulUrl(fake.url()).build();
    ConsulTargetSource a = discovery.source("a").build();
    ConsulTargetSource b = discovery.source("b").build();
    a.whenReady().get(5, TimeUnit.SECONDS);
    b.close();
    assertThat(discovery.sources()).isEqualTo(1);

    discovery.close();
    assertThat(discovery.sources()).isZero();
    assertThat(a.targets()).as("still readable").hasSize(1);
    assertThatThrownBy(() -> discovery.source("c").build()).isInstanceOf(IllegalStateException.class)
        .hasMessage("this ConsulDiscovery was closed");
    try (ConsulDiscovery other = ConsulDiscovery.builder().environment(Map.of()).consulUrl(fake.url()).build()) {
      fake.stopAgent();
      ConsulTargetSource never = other.source("d").build();
      never.close();
      assertThatThrownBy(() -> never.whenReady().get(1, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(CancellationException.class);
    }
  }

  @Test
  void sourceBuilder_fromADiscovery_refusesAgentOptions() {
    try (ConsulDiscovery discovery = ConsulDiscovery.builder().environment(Map.of()).consulUrl(fake.url()).build()) {
      assertThatThrownBy(() -> discovery.source("a").consulUrl("http://127.0.0.1:1"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("consulUrl is set on the ConsulDiscovery this builder comes from");
      assertThatThrownBy(() -> discovery.source("a").token("t"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("token is set on the ConsulDiscovery this builder comes from");
    }
  }
}
