package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static dev.fairway.lb.consul.TestSupport.awaitValue;
import static dev.fairway.lb.consul.TestSupport.fast;
import static dev.fairway.lb.consul.TestSupport.ids;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConsulTargetSourceTest {
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  @Test
  void fixture_defaultMode_threeTargets_andPassingOnly_twoTargets_viaPassingQuery() throws Exception {
    fake.registerRaw("redis", HealthMapperTest.fixture());

    try (ConsulTargetSource all = fast(fake, "redis").build();
        ConsulTargetSource passing = fast(fake, "redis").passingOnly().build()) {
      List<Target> a = all.whenReady().get(5, TimeUnit.SECONDS);
      List<Target> p = passing.whenReady().get(5, TimeUnit.SECONDS);

      assertThat(a).extracting(Target::id).containsExactly("redis-2@node-2", "redis-3@node-3", "redis@foobar");
      assertThat(a).filteredOn(t -> t.id().equals("redis-3@node-3")).extracting(Target::weight).containsExactly(1);
      assertThat(a).filteredOn(t -> t.id().equals("redis-2@node-2")).extracting(Target::host)
          .containsExactly("10.1.10.13");
      assertThat(ids(p)).containsExactly("redis", "redis-2");
      assertThat(fake.requests("/v1/health/")).filteredOn(r -> r.target().contains("passing")).isNotEmpty();
      assertThat(fake.requests("/v1/health/")).filteredOn(r -> !r.target().contains("passing")).isNotEmpty();
    }
  }

  @Test
  void whenReady_completesOnAnEmptyFirstReply_forAnUnknownService() throws Exception {
    try (ConsulTargetSource s = fast(fake, "nobody").build()) {
      assertThat(s.whenReady().get(5, TimeUnit.SECONDS)).isEmpty();
      assertThat(s.targets()).isEmpty();
    }
  }

  @Test
  void registration_deregistration_andCriticalAndBack_reachTargetsAndSubscribersWithinOneSecond() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders", Duration.ofMinutes(1)).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);
      assertThat(seen).hasSize(1);
      TestSupport.sleep(100); // let the loop park in its blocking query
      int before = fake.requests("/v1/health/").size();

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      Duration reg = await(Duration.ofSeconds(1), "o2 registered",
          () -> ids(s.targets()).equals(List.of("o1", "o2")) && ids(last(seen)).equals(List.of("o1", "o2")));

      fake.setStatus("orders", "o1", "critical");
      Duration crit = await(Duration.ofSeconds(1), "o1 critical",
          () -> last(seen).stream().filter(Target::healthy).map(Target::id).toList().equals(List.of("o2@node-o2")));

      fake.setStatus("orders", "o1", "passing");
      Duration back = await(Duration.ofSeconds(1), "o1 back",
          () -> last(seen).stream().filter(Target::healthy).count() == 2);

      fake.deregister("orders", "o2");
      Duration dereg = await(Duration.ofSeconds(1), "o2 gone",
          () -> ids(s.targets()).equals(List.of("o1")) && ids(last(seen)).equals(List.of("o1")));

      // Blocking queries, not polling: about one request per change, each with index and wait.
      List<FakeConsul.SeenRequest> during = fake.requests("/v1/health/").subList(before, fake.requests("/v1/health/").size());
      assertThat(during.size()).as("about one request per change, not polling").isBetween(3, 10);
      assertThat(during).allSatisfy(r -> assertThat(r.target()).contains("index=").contains("wait=1m"));
      assertThat(seen).hasSize(5);
      System.out.printf("change -> subscriber: register %d ms, critical %d ms, back %d ms, deregister %d ms%n",
          reg.toMillis(), crit.toMillis(), back.toMillis(), dereg.toMillis());
    }
  }

  @Test
  void sameDataUnderANewIndex_doesNotNotify() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders").build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      s.subscribe(seen::add);
      int before = fake.requests("/v1/health/").size();

      for (int i = 0; i < 3; i++) {
        fake.touch("orders");
        TestSupport.sleep(50);
      }
      awaitValue(Duration.ofSeconds(1), "three more replies", () -> fake.requests("/v1/health/").size() - before, n -> n >= 3);

      assertThat(seen).hasSize(1);
    }
  }

  @Test
  void tagDatacenterAndWeights_areSentAndMapped() throws Exception {
    fake.register("api", Instance.of("a1", "10.0.0.1", 80).withTags("v2", "eu").withWeights(5, 1)
        .withMeta(Map.of("zone", "eu-1b", "build", "42")));
    fake.register("api", Instance.of("a2", "10.0.0.2", 80).withTags("v1"));
    try (ConsulTargetSource s = fast(fake, "api").tag("v2").tag("eu").datacenter("dc1").build()) {
      List<Target> t = s.whenReady().get(5, TimeUnit.SECONDS);

      assertThat(ids(t)).containsExactly("a1");
      assertThat(t.get(0).weight()).isEqualTo(5);
      assertThat(t.get(0).zone()).isEqualTo("eu-1b");
      assertThat(t.get(0).metadata()).containsEntry("build", "42").containsEntry("tags", "v2,eu");
      assertThat(fake.requests("/v1/health/").get(0).target()).contains("tag=v2").contains("tag=eu").contains("dc=dc1");
    }
  }

  @Test
  void token_isSentAsAHeaderOnEveryRequest_andNeverInAUrl() throws Exception {
    String token = "4f0a1b2c-secret-token";
    fake.requireToken(token);
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders").token(token).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(1), "o2", () -> s.targets().size() == 2);

      List<FakeConsul.SeenRequest> seen = fake.requests("/v1/health/");
      assertThat(seen).hasSizeGreaterThanOrEqualTo(2);
      assertThat(seen).allSatisfy(r -> {
        assertThat(r.token()).isEqualTo(token);
        assertThat(r.target()).doesNotContain(token).doesNotContain("token");
        assertThat(r.status()).as("200, or 0 while still blocked").isIn(0, 200);
      });
      assertThat(s.toString()).doesNotContain(token);
    }
  }

  @Test
  void unknownToken_is403_keepsNothingAndBacksOff() throws Exception {
    fake.requireToken("right");
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ConsulTargetSource s = fast(fake, "orders").token("wrong").meterRegistry(registry).build()) {
      await(Duration.ofSeconds(3), "two refused queries", () -> registry.find("fairway.discovery.errors")
          .tags("reason", "http_403").counters().stream().mapToDouble(c -> c.count()).sum() >= 2);
      await(Duration.ofSeconds(3), "the refused coordinate read", () -> registry.find("fairway.discovery.errors")
          .tags("reason", "coordinates_http_403").counter() != null);

      assertThat(s.whenReady()).isNotDone();
      assertThat(s.targets()).isEmpty();
      assertThat(fake.requests()).allSatisfy(r -> assertThat(r.status()).isIn(0, 403));
      assertThat(registry.find("fairway.discovery.errors").counters()).extracting(c -> c.getId().getTag("reason"))
          .as("the agent/self read of closeness is refused too, and counted apart")
          .containsOnly("http_403", "coordinates_http_403");
    }
  }

  @Test
  void tokenWithoutServiceRead_getsAclFilteredEmptyReplies_notReady_countedAsAclFiltered() throws Exception {
    fake.requireToken("admin");
    fake.addTokenWithoutRead("reader-of-nothing");
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ConsulTargetSource s = fast(fake, "orders").token("reader-of-nothing").meterRegistry(registry).build()) {
      await(Duration.ofSeconds(3), "an ACL-filtered reply", () -> registry.find("fairway.discovery.errors")
          .tags("reason", "acl_filtered").counter() != null);
      await(Duration.ofSeconds(3), "the refused agent/self read", () -> registry.find("fairway.discovery.errors")
          .tags("reason", "coordinates_http_403").counter() != null);

      assertThat(s.whenReady()).isNotDone();
      assertThat(fake.requests("/v1/health/")).allSatisfy(r -> assertThat(r.status()).isIn(0, 200));
      assertThat(fake.requests("/v1/health/")).as("it blocks on the reply's index, no hot loop").hasSizeLessThanOrEqualTo(3);
      assertThat(registry.find("fairway.discovery.errors").counters()).extracting(c -> c.getId().getTag("reason"))
          .as("agent/self needs agent:read, which this token lacks: closeness is off, counted apart")
          .containsOnly("acl_filtered", "coordinates_http_403");
    }
  }

  @Test
  void tags_matchCaseInsensitively_asConsulDoes() throws Exception {
    fake.register("api", Instance.of("a1", "10.0.0.1", 80).withTags("V2"));
    fake.register("api", Instance.of("a2", "10.0.0.2", 80).withTags("v1"));
    try (ConsulTargetSource s = fast(fake, "api").tag("v2").build()) {
      assertThat(ids(s.whenReady().get(5, TimeUnit.SECONDS))).containsExactly("a1");
    }
  }

  @Test
  void metrics_updatesTargetsStalenessSkippedAndEmptied() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    fake.register("orders", Instance.of("bad", "10.0.0.9", 0));
    try (ConsulTargetSource s = fast(fake, "orders").meterRegistry(registry).build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(registry.get("fairway.discovery.targets").tag("service", "orders").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("fairway.discovery.updates").tag("service", "orders").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("fairway.discovery.skipped").tags("service", "orders", "reason", "bad_port")
          .counter().count()).isEqualTo(1.0);
      assertThat(registry.get("fairway.discovery.staleness").tag("service", "orders").timeGauge().value(TimeUnit.SECONDS)).isLessThan(1.0);

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(1), "o2", () -> s.targets().size() == 2);
      assertThat(registry.get("fairway.discovery.updates").tag("service", "orders").counter().count()).isEqualTo(2.0);
      assertThat(registry.get("fairway.discovery.skipped").tags("service", "orders", "reason", "bad_port")
          .counter().count()).as("counted when it turns bad, not on every reply").isEqualTo(1.0);

      fake.deregister("orders", "o1");
      fake.deregister("orders", "o2");
      await(Duration.ofSeconds(1), "empty", () -> s.targets().isEmpty());
      assertThat(registry.get("fairway.discovery.emptied").tag("service", "orders").counter().count()).isEqualTo(1.0);
      assertThat(registry.get("fairway.discovery.targets").tag("service", "orders").gauge().value()).isEqualTo(0.0);
    }
    assertThat(registry.find("fairway.discovery.targets").gauge()).as("removed on close").isNull();
  }

  @Test
  void noRegistry_noMeters_andToStringNamesTheService() throws Exception {
    try (ConsulTargetSource s = fast(fake, "orders").build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(s.toString()).isEqualTo("ConsulTargetSource{service=orders, consul=" + fake.url() + ", targets=0}");
      assertThat(s.service()).isEqualTo("orders");
    }
  }

  @Test
  void subscriberHandle_stopsCalls() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = fast(fake, "orders").build()) {
      s.whenReady().get(5, TimeUnit.SECONDS);
      List<List<Target>> seen = new CopyOnWriteArrayList<>();
      AutoCloseable handle = s.subscribe(seen::add);
      handle.close();

      fake.register("orders", Instance.of("o2", "10.0.0.2", 8080));
      await(Duration.ofSeconds(1), "o2", () -> s.targets().size() == 2);

      assertThat(seen).hasSize(1);
    }
  }

  private static List<Target> last(List<List<Target>> seen) {
    return seen.get(seen.size() - 1);
  }
}
