package dev.fairway.lb.hc5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.LoadReportMeters;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import io.github.resilience4j.core.IntervalFunction;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.HttpHostConnectException;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class FairwayHttpClient5Test {
  private final Closer closer = new Closer();
  private final Clients clients = closer.add(new Clients());

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private LoadBalancer balancer(SimpleMeterRegistry registry, FaultServer... servers) {
    List<Target> targets = new ArrayList<>();
    for (FaultServer s : servers) {
      targets.add(Target.of("127.0.0.1", s.port()));
    }
    return closer.add(LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(Strategy.roundRobin()).meterRegistry(registry)
        .passiveHealth(PassiveHealth.defaults().withConsecutiveFailures(1)).build());
  }

  private static HttpGet get(String url, String id) {
    HttpGet get = new HttpGet(url);
    get.addHeader(FaultServer.CALL_HEADER, id);
    return get;
  }

  private static HttpPost post(String url, String id) {
    HttpPost post = new HttpPost(url);
    post.addHeader(FaultServer.CALL_HEADER, id);
    post.setEntity(new StringEntity("amount=5"));
    return post;
  }

  private static TargetState state(LoadBalancer lb, FaultServer server) {
    for (TargetStatus s : lb.status()) {
      if (s.target().port() == server.port()) {
        return s.state();
      }
    }
    throw new AssertionError("no target on port " + server.port());
  }

  @Test
  void gets_areBalancedAcrossTargets_andOtherHostsPassThrough() throws Exception {
    FaultServer a = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    FaultServer b = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(new SimpleMeterRegistry(), a, b);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    for (int i = 0; i < 4; i++) {
      assertThat(Clients.body(client, get("http://orders/work", "call-" + i)))
          .isEqualTo("ok");
    }
    String direct = Clients.body(client, get("http://127.0.0.1:" + a.port() + "/work", "direct"));

    assertThat(direct).isEqualTo("ok");
    assertThat(a.receivedTotal()).isEqualTo(3); // 2 balanced + the direct one
    assertThat(b.receivedTotal()).isEqualTo(2);
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void logicalHost_isCaseInsensitive() throws Exception {
    FaultServer a = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = balancer(new SimpleMeterRegistry(), a);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("Orders", lb).build(), 2_000);

    assertThat(Clients.code(client, get("http://ORDERS/work", "upper"))).isEqualTo(200);
    assertThat(a.received("upper")).isEqualTo(1);
  }

  @Test
  void refusedTarget_isRetriedOnAnother_evenForAPost() throws Exception {
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    int refused = FaultServer.refusedPort();
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", refused), Target.of("127.0.0.1", healthy.port()))
        .strategy(Strategy.roundRobin()).build());
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    for (int i = 0; i < 2; i++) {
      assertThat(Clients.code(client, post("http://orders/work", "post-" + i))).isEqualTo(200);
    }

    assertThat(healthy.received("post-0")).isEqualTo(1);
    assertThat(healthy.received("post-1")).isEqualTo(1);
    assertThat(lb.status()).filteredOn(s -> s.target().port() == refused)
        .singleElement().satisfies(s -> assertThat(s.state()).isEqualTo(TargetState.EJECTED));
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void unavailableTarget_getIsRetriedOnAnother_postGetsThe503_andTheTargetIsCharged() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", unavailable.port()), Target.of("127.0.0.1", healthy.port()))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build());
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    List<Integer> getCodes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      getCodes.add(Clients.code(client, get("http://orders/work", "get-" + i)));
    }
    List<Integer> postCodes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      postCodes.add(Clients.code(client, post("http://orders/work", "post-" + i)));
    }

    assertThat(getCodes).containsExactly(200, 200);
    assertThat(postCodes).containsExactlyInAnyOrder(200, 503);
    assertThat(unavailable.receivedWithPrefix("get-")).isPositive(); // round robin sent the first there
    for (int i = 0; i < 2; i++) { // each GET at most once at the 503 target, then once at the healthy one
      assertThat(unavailable.received("get-" + i)).isLessThanOrEqualTo(1);
      assertThat(healthy.received("get-" + i)).isEqualTo(1);
    }
    assertThat(unavailable.receivedWithPrefix("post-") + healthy.receivedWithPrefix("post-")).isEqualTo(2);
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void aFailureStatus_isTheTargetsFailure() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = balancer(new SimpleMeterRegistry(), unavailable);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    assertThat(Clients.code(client, post("http://orders/work", "post"))).isEqualTo(503);

    assertThat(state(lb, unavailable)).isEqualTo(TargetState.EJECTED); // one failure ejects (consecutive failures 1)
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void theSlot_isHeldUntilTheEntityIsReadToItsEnd() throws Exception {
    FaultServer big = closer.add(FaultServer.start(FaultServer.Behaviour.BIG_BODY));
    LoadBalancer lb = balancer(new SimpleMeterRegistry(), big);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    try (ClassicHttpResponse response = client.executeOpen(null, get("http://orders/big", "big"), null)) {
      assertThat(Clients.inFlight(lb)).as("after the headers").isEqualTo(1);
      InputStream content = response.getEntity().getContent();
      byte[] head = content.readNBytes(10);
      assertThat(head).hasSize(10);
      assertThat(Clients.inFlight(lb)).as("mid-body").isEqualTo(1);
      assertThat(content.readAllBytes()).hasSize(FaultServer.BIG_BODY_BYTES - 10);
      assertThat(Clients.inFlight(lb)).as("at the end of the body").isZero();
    }
    assertThat(Clients.inFlight(lb)).isZero();
    assertThat(state(lb, big)).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void theSlot_isFreedWhenTheResponseIsClosedUnread_onceOnly() throws Exception {
    FaultServer big = closer.add(FaultServer.start(FaultServer.Behaviour.BIG_BODY));
    LoadBalancer lb = balancer(new SimpleMeterRegistry(), big);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    ClassicHttpResponse response = client.executeOpen(null, get("http://orders/big", "big"), null);
    assertThat(Clients.inFlight(lb)).isEqualTo(1);
    response.close();
    assertThat(Clients.inFlight(lb)).isZero();
    response.close();
    EntityUtils.consumeQuietly(response.getEntity());
    assertThat(Clients.inFlight(lb)).isZero();
    assertThat(state(lb, big)).isEqualTo(TargetState.HEALTHY);

    // A second exchange on the same balancer proves the slot count did not go below zero.
    try (ClassicHttpResponse again = client.executeOpen(null, get("http://orders/big", "again"), null)) {
      assertThat(Clients.inFlight(lb)).isEqualTo(1);
      EntityUtils.consume(again.getEntity());
    }
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void loadReports_reachTheBalancer_andAreCounted() throws Exception {
    FaultServer reporting = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY_WITH_LOAD_REPORT));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer lb = balancer(registry, reporting);
    CloseableHttpClient client = clients.client(FairwayHttpClient5.builder().service("orders", lb).build(), 2_000);

    for (int i = 0; i < 3; i++) {
      Clients.body(client, get("http://orders/work", "r" + i));
    }

    Counter parsed = registry.find(LoadReportMeters.NAME).tag("service", "orders").tag("result", "parsed").counter();
    assertThat(parsed).isNotNull();
    assertThat(parsed.count()).isEqualTo(3.0);
  }

  @Test
  void manyThreads_overHealthyAndFailingTargets_allSucceed_andEverySlotIsFreed() throws Exception {
    FaultServer a = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    FaultServer b = closer.add(FaultServer.start(FaultServer.Behaviour.BIG_BODY));
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", a.port()), Target.of("127.0.0.1", b.port()),
            Target.of("127.0.0.1", unavailable.port()))
        .strategy(Strategy.leastConnections()).passiveHealth(PassiveHealth.disabled()).build());
    CloseableHttpClient client = clients.add(FairwayHttpClient5.builder().service("orders", lb)
        .retryBudget(1.0, 1_000).build().customize(Clients.builder(5_000, 20, 5_000)).build());
    int threads = 4;
    int callsEach = 25;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<Integer>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(pool.submit(() -> {
          List<Integer> codes = new ArrayList<>();
          for (int i = 0; i < callsEach; i++) {
            codes.add(Clients.code(client, get("http://orders/work", "t" + thread + "-" + i)));
          }
          return codes;
        }));
      }
      for (Future<List<Integer>> result : results) {
        assertThat(result.get(20, TimeUnit.SECONDS)).hasSize(callsEach).containsOnly(200);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(a.receivedTotal() + b.receivedTotal()).isEqualTo(threads * callsEach);
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void anEmptyRetryBudget_allowsNoRetry() throws Exception {
    FaultServer healthy = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
    int refused = FaultServer.refusedPort();
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", refused), Target.of("127.0.0.1", healthy.port()))
        .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.disabled()).build());
    CloseableHttpClient client = clients.client(
        FairwayHttpClient5.builder().service("orders", lb).retryBudget(0.0, 0).build(), 2_000);

    List<String> outcomes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      try {
        outcomes.add(String.valueOf(Clients.code(client, get("http://orders/work", "call-" + i))));
      } catch (HttpHostConnectException e) {
        outcomes.add("refused");
      }
    }

    assertThat(outcomes).containsExactlyInAnyOrder("200", "refused");
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void aNewRoundOverEveryTarget_waitsTheBackoffFirst_inOrder() throws Exception {
    FaultServer unavailable = closer.add(FaultServer.start(FaultServer.Behaviour.UNAVAILABLE));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", unavailable.port()))
        .passiveHealth(PassiveHealth.disabled()).build());
    List<Long> waits = new ArrayList<>();
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb).maxAttempts(3)
        .backoff(IntervalFunction.ofExponentialBackoff(10, 2.0)).sleeper((millis, runtime) -> waits.add(millis)).build();
    CloseableHttpClient client = clients.add(fairway.customize(Clients.builder(2_000, 5, 5_000)).build());

    assertThat(Clients.code(client, get("http://orders/work", "rounds"))).isEqualTo(503);

    assertThat(unavailable.received("rounds")).isEqualTo(3);
    assertThat(waits).containsExactly(10L, 20L);
    assertThat(Clients.inFlight(lb)).isZero();
  }

  @Test
  void builder_rejectsBadValues_namingFieldAndValue() {
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", 1)).build());
    assertThatThrownBy(() -> FairwayHttpClient5.builder().maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts: 0 (expected: 1..10)");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().failureStatusCodes(503, 99))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("failureStatusCodes: 99 (expected: 100..599)");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().retryBudget(11.0, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("percentCanRetry: 11.0 (expected: 0.0..10.0)");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().bufferBodiesUpTo(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("bufferBodiesUpTo: -1 (expected: 0..16777216)");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service("orders:8080", lb))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("logicalHost: \"orders:8080\" (expected: a host name such as \"orders\")");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service("or ders", lb))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("logicalHost: \"or ders\"");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service("user@orders", lb))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("logicalHost: \"user@orders\"");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service(" ", lb))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("logicalHost: \" \"");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service("orders", lb).service("ORDERS", lb))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("service \"orders\" was already set to");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().maxAttempts(2).maxAttempts(3))
        .isInstanceOf(IllegalStateException.class).hasMessage("maxAttempts was already set to 2");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("services: \"none\" (expected: at least one service(logicalHost, loadBalancer))");
    assertThatThrownBy(() -> FairwayHttpClient5.builder().service("orders", lb).failureStatusCodes(500)
        .retryStatusCodes(503).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retryStatusCodes: 503 (expected: each also in failureStatusCodes [500])");
  }
}
