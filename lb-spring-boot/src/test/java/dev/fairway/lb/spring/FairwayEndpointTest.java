package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;

/** The endpoint's view of one balancer: panic mode, why and until when a target is out, subset share, discovery age. */
class FairwayEndpointTest {
  private static final Instant NOW = Instant.parse("2026-12-02T07:00:00Z");
  private final AtomicLong ticker = new AtomicLong(5_000_000_000L);
  private final FairwayBalancers registry = new FairwayBalancers();
  private final InstanceTargets instances = new InstanceTargets("orders", null, ticker::get);
  private final LoadBalancer balancer = LoadBalancer.builder("orders").targets(instances.sourceOrEmpty())
      .strategy(Strategy.roundRobin()).passiveHealth(PassiveHealth.defaults().withMaxEjectionPercent(100))
      .panicThreshold(60).build();
  private final FairwayEndpoint endpoint = new FairwayEndpoint(registry, Clock.fixed(NOW, ZoneOffset.UTC));

  @AfterEach
  void close() {
    balancer.close();
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> view() {
    Map<String, Object> v = endpoint.balancer("orders");
    assertThat(v).isNotNull();
    return v;
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> target(String id) {
    return ((List<Map<String, Object>>) view().get("targets")).stream().filter(t -> t.get("id").equals(id))
        .findFirst().orElseThrow();
  }

  @Test
  void view_beforeTheFirstList_listsTheBalancerWithNoTargets() {
    registry.register("orders", balancer, instances);
    Map<String, Object> v = view();
    assertThat(v).containsEntry("service", "orders").containsEntry("strategy", "round-robin")
        .containsEntry("panic", false).containsEntry("targets", List.of());
    Map<String, Object> discovery = new java.util.LinkedHashMap<>();
    discovery.put("instances", 0);
    discovery.put("listAgeSeconds", null);
    assertThat(v.get("discovery")).isEqualTo(discovery);
    assertThat(endpoint.balancers()).containsOnlyKeys("balancers");
  }

  @Test
  void view_showsPanic_whyATargetIsOut_untilWhen_itsSubsetShare_andTheListsAge() throws Exception {
    registry.register("orders", balancer, instances);
    instances.update(List.of(new DefaultServiceInstance("a", "orders", "127.0.0.1", 8081, false),
        new DefaultServiceInstance("b", "orders", "127.0.0.1", 8082, false)));
    ticker.addAndGet(Duration.ofMillis(2_500).toNanos());

    balancer.pickTarget(Target.of("127.0.0.1", 8081).withId("a")).failure(new ConnectException("refused"));

    Map<String, Object> v = view();
    assertThat(v.get("panic")).isEqualTo(true); // 1 of 2 in service, below 60%
    assertThat(v.get("discovery")).isEqualTo(Map.of("instances", 2, "listAgeSeconds", 2.5));
    Map<String, Object> a = target("a");
    assertThat(a).containsEntry("state", "EJECTED").containsEntry("outReason", "passive-health")
        .containsEntry("subsetShare", 1.0);
    // The first ejection lasts 10 s (the balancer's own clock runs on: at most 10 s from now).
    Instant until = Instant.parse((String) a.get("outUntil"));
    assertThat(until).isAfter(NOW).isBeforeOrEqualTo(NOW.plusSeconds(10));
    Map<String, Object> b = target("b");
    assertThat(b).containsEntry("state", "HEALTHY").containsEntry("subsetShare", 1.0);
    assertThat(b.get("outReason")).isNull();
    assertThat(b.get("outUntil")).isNull();
  }
}
