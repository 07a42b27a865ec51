package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Closer;
import dev.fairway.lb.testing.FaultServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.message.BasicHttpRequest;
import org.apache.hc.core5.util.Timeout;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link AffinityKey}'s factories over HttpClient's request, and the key reaching every pick of an
 * exchange, classic and async, over real loopback servers: the first attempt, and the retry after a
 * refused connect.
 */
@org.junit.jupiter.api.Timeout(30)
class AffinityKeyTest {
  private final Closer closer = new Closer();
  private final Clients clients = closer.add(new Clients());
  private int calls;

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private static HttpRequest request(String... headers) {
    BasicHttpRequest request = new BasicHttpRequest("GET", "http://orders/x");
    for (int i = 0; i < headers.length; i += 2) {
      request.addHeader(headers[i], headers[i + 1]);
    }
    return request;
  }

  // ---- the factories

  @Test
  void clientIp_takesFirstForwardedForHop_thenRealIp_thenNull() {
    assertThat(AffinityKey.clientIp().apply(request("X-Forwarded-For", " 203.0.113.7 , 10.0.0.1", "X-Real-IP", "10.9.9.9")))
        .isEqualTo("203.0.113.7");
    assertThat(AffinityKey.clientIp().apply(request("x-real-ip", "198.51.100.4"))).isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request("X-Forwarded-For", " ,10.0.0.1", "X-Real-IP", "198.51.100.4")))
        .isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request())).isNull();
  }

  /** The first of each repeated header, as lb-okhttp's and the JDK's {@code clientIp()} read them. */
  @Test
  void clientIp_repeatedHeaders_readsTheFirstOfEach() {
    assertThat(AffinityKey.clientIp().apply(
        request("X-Forwarded-For", "203.0.113.7, 10.0.0.1", "X-Forwarded-For", "10.0.0.2"))).isEqualTo("203.0.113.7");
    assertThat(AffinityKey.clientIp().apply(request("X-Real-IP", "198.51.100.4", "X-Real-IP", "10.9.9.9")))
        .isEqualTo("198.51.100.4");
  }

  @Test
  void header_firstValueCaseInsensitive_nullWhenAbsentOrEmpty() {
    AffinityKey key = AffinityKey.header(" X-User ");
    assertThat(key.apply(request("x-user", "alice", "X-User", "bob"))).isEqualTo("alice");
    assertThat(key.apply(request("X-User", ""))).isNull();
    assertThat(key.apply(request())).isNull();
  }

  @Test
  void cookie_findsNamedCookieAcrossHeaders() {
    AffinityKey key = AffinityKey.cookie("session");
    assertThat(key.apply(request("Cookie", "a=1; session=abc; b=2"))).isEqualTo("abc");
    assertThat(key.apply(request("Cookie", "session=\"q-1\""))).isEqualTo("q-1");
    assertThat(key.apply(request("Cookie", "a=1", "cookie", "session=z"))).isEqualTo("z");
    assertThat(key.apply(request("Cookie", "session=", "Cookie", "session=z"))).isNull(); // the first naming it decides
    assertThat(key.apply(request("Cookie", "xsession=no; sessionx=no"))).isNull();
    assertThat(key.apply(request())).isNull();
  }

  @Test
  void factoriesAndBuilder_rejectBadArguments() {
    assertThatThrownBy(() -> AffinityKey.header(" ")).hasMessage("header: \" \" (expected: a non-blank header name)");
    assertThatThrownBy(() -> AffinityKey.cookie(null)).hasMessage("cookie: null (expected: a non-blank cookie name)");
    assertThatThrownBy(() -> AffinityKey.header("a;b")).hasMessage("header: \"a;b\" (expected: a non-blank header name)");
    FairwayHttpClient5.Builder builder = FairwayHttpClient5.builder();
    assertThatThrownBy(() -> builder.affinityKey(null)).hasMessage("affinityKey: null (expected: an AffinityKey)");
    builder.affinityKey(AffinityKey.clientIp());
    assertThatThrownBy(() -> builder.affinityKey(AffinityKey.clientIp()))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("affinityKey was already set to ");
  }

  // ---- the key on every pick

  private final List<FaultServer> servers = new ArrayList<>();

  private List<Target> healthy(int n) throws Exception {
    List<Target> targets = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      FaultServer s = closer.add(FaultServer.start(FaultServer.Behaviour.HEALTHY));
      servers.add(s);
      targets.add(Target.of("127.0.0.1", s.port()));
    }
    return targets;
  }

  private LoadBalancer balancer(Strategy strategy, PassiveHealth health, List<Target> targets,
      @Nullable SimpleMeterRegistry registry) {
    LoadBalancer.Builder b = LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(strategy).passiveHealth(health);
    if (registry != null) {
      b.meterRegistry(registry);
    }
    return closer.add(b.build());
  }

  private CloseableHttpAsyncClient asyncClient(FairwayHttpClient5 fairway) {
    CloseableHttpAsyncClient client = fairway.customize(HttpAsyncClients.custom()
        .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
            .setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.ofSeconds(1)).setSocketTimeout(Timeout.ofSeconds(10)).build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.ofSeconds(10)).build()))
        .build();
    client.start();
    return closer.add(client);
  }

  /**
   * Sends one GET with {@code header} (name, value; none when null) through the classic or the
   * async client and returns the port of the server that received it (each server counts a call's
   * id before it answers).
   */
  private int call(Object client, String @Nullable [] header) throws Exception {
    String id = "call-" + calls++;
    if (client instanceof CloseableHttpClient classic) {
      HttpGet get = new HttpGet("http://orders/work");
      get.setHeader(FaultServer.CALL_HEADER, id);
      if (header != null) {
        get.setHeader(header[0], header[1]);
      }
      assertThat(Clients.code(classic, get)).isEqualTo(200);
    } else {
      SimpleRequestBuilder b = SimpleRequestBuilder.get("http://orders/work").addHeader(FaultServer.CALL_HEADER, id);
      if (header != null) {
        b.addHeader(header[0], header[1]);
      }
      SimpleHttpRequest request = b.build();
      assertThat(((CloseableHttpAsyncClient) client).execute(request, null).get(10, TimeUnit.SECONDS).getCode())
          .isEqualTo(200);
    }
    int port = -1;
    for (FaultServer s : servers) {
      if (s.received(id) > 0) {
        assertThat(port).as("%s received once", id).isEqualTo(-1);
        port = s.port();
      }
    }
    assertThat(port).as("a server received %s", id).isPositive();
    return port;
  }

  private static String[] user(String name) {
    return new String[] {"X-User", name};
  }

  /** The port {@code twin} (an idle balancer over the same targets) picks for {@code key}, avoiding {@code exclude}. */
  private static int twinPick(LoadBalancer twin, String key, Set<Target> exclude) throws Exception {
    Pick pick = twin.pick(key, exclude);
    pick.release();
    return pick.target().port();
  }

  @Test
  void consistentHash_sameKeyLandsOnItsRingTarget_classicAndAsync() throws Exception {
    List<Target> targets = healthy(3);
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), targets, null);
    LoadBalancer twin = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), targets, null);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();
    CloseableHttpClient classic = clients.client(fairway, 10_000);
    CloseableHttpAsyncClient async = asyncClient(fairway);

    Set<Integer> used = new HashSet<>();
    for (int u = 0; u < 12; u++) {
      String key = "user-" + u;
      int home = twinPick(twin, key, Set.of());
      for (int i = 0; i < 3; i++) {
        assertThat(call(classic, user(key))).as("classic %s", key).isEqualTo(home);
        assertThat(call(async, user(key))).as("async %s", key).isEqualTo(home);
      }
      used.add(home);
    }
    assertThat(used).as("12 keys spread over the ring").hasSizeGreaterThan(1);
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void keyAffinity_sameKeySameTarget_andKeysSpread() throws Exception {
    LoadBalancer lb = balancer(Strategy.keyAffinity(), PassiveHealth.defaults(), healthy(3), null);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb)
        .affinityKey(AffinityKey.cookie("session")).build();
    CloseableHttpClient classic = clients.client(fairway, 10_000);
    CloseableHttpAsyncClient async = asyncClient(fairway);

    Map<String, Set<Integer>> portsByKey = new HashMap<>();
    for (int i = 0; i < 4; i++) {
      for (int u = 0; u < 12; u++) {
        String[] cookie = {"Cookie", "theme=dark; session=s" + u};
        portsByKey.computeIfAbsent("s" + u, k -> new HashSet<>()).add(call(i % 2 == 0 ? classic : async, cookie));
      }
    }
    Set<Integer> homes = new HashSet<>();
    portsByKey.forEach((key, ports) -> {
      assertThat(ports).as("targets of %s", key).hasSize(1);
      homes.addAll(ports);
    });
    assertThat(homes).as("12 keys over 3 targets").hasSizeGreaterThan(1);
  }

  @Test
  void absentOrEmptyKey_picksWithoutAffinity_classicAndAsync() throws Exception {
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), healthy(3), null);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();
    CloseableHttpClient classic = clients.client(fairway, 10_000);
    CloseableHttpAsyncClient async = asyncClient(fairway);

    Set<Integer> classicPorts = new HashSet<>();
    Set<Integer> asyncPorts = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      classicPorts.add(call(classic, i % 2 == 0 ? null : user("")));
      asyncPorts.add(call(async, i % 2 == 0 ? null : user("")));
    }
    // No key: consistent hashing falls back to power of two choices, which spreads the calls. Had the
    // handler passed any fixed key instead (the host, ""), every call would land on one target.
    assertThat(classicPorts).hasSizeGreaterThan(1);
    assertThat(asyncPorts).hasSizeGreaterThan(1);
  }

  @Test
  void retryAfterRefusedConnect_keepsTheKey_andGoesToTheKeysNextTarget_classicAndAsync() throws Exception {
    List<Target> targets = healthy(3);
    Target refused = Target.of("127.0.0.1", FaultServer.refusedPort());
    targets.add(refused);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // Passive health off: the refused target stays on the ring, so every exchange of a key homed
    // there tries it first, and its retry must pick with the same key among the targets left.
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.disabled(), targets, registry);
    LoadBalancer twin = balancer(Strategy.consistentHash(), PassiveHealth.disabled(), targets, null);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();
    CloseableHttpClient classic = clients.client(fairway, 10_000);
    CloseableHttpAsyncClient async = asyncClient(fairway);

    List<String> homedOnRefused = new ArrayList<>();
    for (int u = 0; homedOnRefused.size() < 8; u++) {
      if (twinPick(twin, "user-" + u, Set.of()) == refused.port()) {
        homedOnRefused.add("user-" + u);
      }
    }
    for (int i = 0; i < homedOnRefused.size(); i++) {
      String key = homedOnRefused.get(i);
      int next = twinPick(twin, key, Set.of(refused));
      assertThat(call(i % 2 == 0 ? classic : async, user(key))).as("retry of %s", key).isEqualTo(next);
    }
    Counter retries = registry.find("fairway.retries").counter();
    assertThat(retries).isNotNull();
    assertThat(retries.count()).isEqualTo(8.0);
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }

  @Test
  void keyAffinity_keyMovesOffItsDeadTargetAndSticksToTheNewOne_classicAndAsync() throws Exception {
    LoadBalancer lb = balancer(Strategy.keyAffinity(), PassiveHealth.defaults(), healthy(3), null);
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();
    CloseableHttpClient classic = clients.client(fairway, 10_000);
    CloseableHttpAsyncClient async = asyncClient(fairway);

    Set<Integer> before = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      before.add(call(i % 2 == 0 ? classic : async, user("alice")));
    }
    assertThat(before).hasSize(1);
    int first = before.iterator().next();
    for (FaultServer s : servers) {
      if (s.port() == first) {
        s.close(); // connections refused from now on
      }
    }

    int moved = call(classic, user("alice"));
    Set<Integer> after = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      after.add(call(i % 2 == 0 ? async : classic, user("alice")));
    }

    assertThat(moved).isNotEqualTo(first);
    assertThat(after).containsExactly(moved);
    eventually("no slot held", () -> Clients.inFlight(lb) == 0);
  }
}
