package dev.fairway.lb.jdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.FaultServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link AffinityKey}'s factories over the JDK's request, and the key reaching every pick of a call
 * of {@link FairwayHttpClient} over real loopback servers: the first attempt, and the retry after a
 * refused connect.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AffinityKeyTest {
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = opened.size() - 1; i >= 0; i--) {
      opened.get(i).close();
    }
  }

  private static HttpRequest.Builder request() {
    return HttpRequest.newBuilder(URI.create("http://orders/x"));
  }

  private static HttpRequest user(@Nullable String user) {
    HttpRequest.Builder b = request();
    if (user != null) {
      b.header("X-User", user);
    }
    return b.build();
  }

  // ---- the factories

  @Test
  void clientIp_takesFirstForwardedForHop_thenRealIp_thenNull() {
    assertThat(AffinityKey.clientIp().apply(request()
        .header("X-Forwarded-For", " 203.0.113.7 , 10.0.0.1").header("X-Real-IP", "10.9.9.9").build()))
        .isEqualTo("203.0.113.7");
    assertThat(AffinityKey.clientIp().apply(request().header("x-real-ip", "198.51.100.4").build()))
        .isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request()
        .header("X-Forwarded-For", " ,10.0.0.1").header("X-Real-IP", "198.51.100.4").build()))
        .isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request().build())).isNull();
  }

  /** The first of each repeated header, as lb-okhttp's and HttpClient 5's {@code clientIp()} read them. */
  @Test
  void clientIp_repeatedHeaders_readsTheFirstOfEach() {
    assertThat(AffinityKey.clientIp().apply(request()
        .header("X-Forwarded-For", "203.0.113.7, 10.0.0.1").header("X-Forwarded-For", "10.0.0.2").build()))
        .isEqualTo("203.0.113.7");
    assertThat(AffinityKey.clientIp().apply(request()
        .header("X-Real-IP", "198.51.100.4").header("X-Real-IP", "10.9.9.9").build()))
        .isEqualTo("198.51.100.4");
  }

  @Test
  void header_firstValueCaseInsensitive_nullWhenAbsentOrEmpty() {
    AffinityKey key = AffinityKey.header(" X-User ");
    assertThat(key.apply(request().header("x-user", "alice").header("X-User", "bob").build())).isEqualTo("alice");
    assertThat(key.apply(request().header("X-User", "").build())).isNull();
    assertThat(key.apply(request().build())).isNull();
  }

  @Test
  void cookie_findsNamedCookieAcrossHeaders() {
    AffinityKey key = AffinityKey.cookie("session");
    assertThat(key.apply(request().header("Cookie", "a=1; session=abc; b=2").build())).isEqualTo("abc");
    assertThat(key.apply(request().header("Cookie", "session=\"q-1\"").build())).isEqualTo("q-1");
    assertThat(key.apply(request().header("Cookie", "a=1").header("Cookie", "session=z").build())).isEqualTo("z");
    assertThat(key.apply(request().header("Cookie", "xsession=no; sessionx=no").build())).isNull();
    assertThat(key.apply(request().header("Cookie", "session=").build())).isNull();
    assertThat(key.apply(request().build())).isNull();
  }

  @Test
  void factoriesAndBuilder_rejectBadArguments() {
    assertThatThrownBy(() -> AffinityKey.header(" ")).hasMessage("header: \" \" (expected: a non-blank header name)");
    assertThatThrownBy(() -> AffinityKey.cookie(null)).hasMessage("cookie: null (expected: a non-blank cookie name)");
    assertThatThrownBy(() -> AffinityKey.cookie("a=b")).hasMessage("cookie: \"a=b\" (expected: a non-blank cookie name)");
    FairwayHttpClient.Builder builder = FairwayHttpClient.builder(plain);
    assertThatThrownBy(() -> builder.affinityKey(null)).hasMessage("affinityKey: null (expected: an AffinityKey)");
    builder.affinityKey(AffinityKey.clientIp());
    assertThatThrownBy(() -> builder.affinityKey(AffinityKey.clientIp()))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("affinityKey was already set to ");
  }

  // ---- the key on every pick

  private List<FaultServer> healthy(int n) throws Exception {
    List<FaultServer> servers = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      FaultServer s = FaultServer.start(FaultServer.Behaviour.HEALTHY);
      opened.add(s);
      servers.add(s);
    }
    return servers;
  }

  private LoadBalancer balancer(Strategy strategy, PassiveHealth health, List<Target> targets) {
    return balancer(strategy, health, targets, null);
  }

  private LoadBalancer balancer(Strategy strategy, PassiveHealth health, List<Target> targets,
      @Nullable SimpleMeterRegistry registry) {
    LoadBalancer.Builder b = LoadBalancer.builder("orders").targets(targets.toArray(new Target[0]))
        .strategy(strategy).passiveHealth(health);
    if (registry != null) {
      b.meterRegistry(registry);
    }
    LoadBalancer lb = b.build();
    opened.add(lb);
    return lb;
  }

  private static List<Target> targets(List<FaultServer> servers) {
    List<Target> targets = new ArrayList<>();
    for (FaultServer s : servers) {
      targets.add(Target.of("127.0.0.1", s.port()));
    }
    return targets;
  }

  /** The port a call reached: the JDK's response carries the URI it was sent to. */
  private static int port(HttpResponse<?> response) {
    assertThat(response.statusCode()).isEqualTo(200);
    return response.uri().getPort();
  }

  /** The port {@code twin} (an idle balancer over the same targets) picks for {@code key}, avoiding {@code exclude}. */
  private static int twinPick(LoadBalancer twin, String key, Set<Target> exclude) throws Exception {
    Pick pick = twin.pick(key, exclude);
    pick.release();
    return pick.target().port();
  }

  @Test
  void consistentHash_sameKeyLandsOnItsRingTarget_sendAndSendAsync() throws Exception {
    List<Target> targets = targets(healthy(3));
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), targets);
    LoadBalancer twin = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), targets);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();

    Set<Integer> used = new HashSet<>();
    for (int u = 0; u < 12; u++) {
      String key = "user-" + u;
      int home = twinPick(twin, key, Set.of());
      for (int i = 0; i < 4; i++) {
        assertThat(port(client.send(user(key), BodyHandlers.ofString()))).as("send %s", key).isEqualTo(home);
        assertThat(port(client.sendAsync(user(key), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS)))
            .as("sendAsync %s", key).isEqualTo(home);
      }
      used.add(home);
    }
    assertThat(used).as("12 keys spread over the ring").hasSizeGreaterThan(1);
    assertThat(FairwayHttpClientTest.inFlight(lb)).isZero();
  }

  @Test
  void keyAffinity_sameKeySameTarget_andKeysSpread() throws Exception {
    LoadBalancer lb = balancer(Strategy.keyAffinity(), PassiveHealth.defaults(), targets(healthy(3)));
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .affinityKey(AffinityKey.cookie("session")).build();

    Map<String, Set<Integer>> portsByKey = new HashMap<>();
    for (int i = 0; i < 5; i++) {
      for (int u = 0; u < 12; u++) {
        HttpRequest request = request().header("Cookie", "theme=dark; session=s" + u).build();
        HttpResponse<String> response = i % 2 == 0
            ? client.send(request, BodyHandlers.ofString())
            : client.sendAsync(request, BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
        portsByKey.computeIfAbsent("s" + u, k -> new HashSet<>()).add(port(response));
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
  void absentOrNullKey_picksWithoutAffinity() throws Exception {
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.defaults(), targets(healthy(3)));
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();

    Set<Integer> withoutHeader = new HashSet<>();
    Set<Integer> emptyHeader = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      withoutHeader.add(port(client.send(user(null), BodyHandlers.ofString())));
      emptyHeader.add(port(client.sendAsync(user(""), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS)));
    }
    // No key: consistent hashing falls back to power of two choices, which spreads the calls. Had the
    // client passed any fixed key instead (the host, ""), every call would land on one target.
    assertThat(withoutHeader).hasSizeGreaterThan(1);
    assertThat(emptyHeader).hasSizeGreaterThan(1);
  }

  @Test
  void retryAfterRefusedConnect_keepsTheKey_andGoesToTheKeysNextTarget() throws Exception {
    List<Target> targets = targets(healthy(3));
    Target refused = Target.of("127.0.0.1", FaultServer.refusedPort());
    targets.add(refused);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // Passive health off: the refused target stays on the ring, so every call of a key homed there
    // tries it first, and its retry must pick with the same key among the targets left.
    LoadBalancer lb = balancer(Strategy.consistentHash(), PassiveHealth.disabled(), targets, registry);
    LoadBalancer twin = balancer(Strategy.consistentHash(), PassiveHealth.disabled(), targets);
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();

    List<String> homedOnRefused = new ArrayList<>();
    for (int u = 0; homedOnRefused.size() < 8; u++) {
      if (twinPick(twin, "user-" + u, Set.of()) == refused.port()) {
        homedOnRefused.add("user-" + u);
      }
    }
    for (int i = 0; i < homedOnRefused.size(); i++) {
      String key = homedOnRefused.get(i);
      int next = twinPick(twin, key, Set.of(refused));
      HttpResponse<String> response = i % 2 == 0
          ? client.send(user(key), BodyHandlers.ofString())
          : client.sendAsync(user(key), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
      assertThat(port(response)).as("retry of %s", key).isEqualTo(next);
    }
    Counter retries = registry.find("fairway.retries").counter();
    assertThat(retries).isNotNull();
    assertThat(retries.count()).isEqualTo(8.0);
    assertThat(FairwayHttpClientTest.inFlight(lb)).isZero();
  }

  @Test
  void keyAffinity_keyMovesOffItsDeadTargetAndSticksToTheNewOne() throws Exception {
    List<FaultServer> servers = healthy(3);
    LoadBalancer lb = balancer(Strategy.keyAffinity(), PassiveHealth.defaults(), targets(servers));
    FairwayHttpClient client = FairwayHttpClient.builder(plain).service("orders", lb)
        .affinityKey(AffinityKey.header("X-User")).build();

    Set<Integer> before = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      before.add(port(client.send(user("alice"), BodyHandlers.ofString())));
    }
    assertThat(before).hasSize(1);
    int first = before.iterator().next();
    for (FaultServer s : servers) {
      if (s.port() == first) {
        s.close(); // connections refused from now on
      }
    }

    int moved = port(client.send(user("alice"), BodyHandlers.ofString()));
    Set<Integer> after = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      after.add(port(client.sendAsync(user("alice"), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS)));
    }

    assertThat(moved).isNotEqualTo(first);
    assertThat(after).containsExactly(moved);
    assertThat(FairwayHttpClientTest.inFlight(lb)).isZero();
  }
}
